#!/usr/bin/env bash
# The rest: backend both ways with restic 0.14, against `rclone serve restic` on loopback
# (tests/tools/rclone-rest-start):
#   A. haven init + backup of make_tree over rest: -> restic check --read-data clean, restic
#      restore identical; haven restore (cold cache) exact
#   B. restic init + backup over rest: -> haven check --read-data clean, haven restore identical
#   C. forget --prune over rest: (haven) -> restic check --read-data clean, the kept snapshot
#      restores; restic prune, then haven check --read-data
#   D. basic auth: credentials from HAVEN_REST_USERNAME/PASSWORD and from the URL (given in
#      HAVEN_REPOSITORY, never on a command line); -o rest.connections=; the password is not
#      in any output nor in any process's command line while haven runs
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../tools/lib.sh
source "$(dirname "$0")/../tools/lib.sh"
# shellcheck source-path=SCRIPTDIR source=../tools/rest_lib.sh
source "$(dirname "$0")/../tools/rest_lib.sh"
setup "$@"
need_restic
need_haven
need_python
rest_setup
CMD_TIMEOUT=120

SRC="$W/src"
make_tree "$SRC"
rest_start plain
HREPO="rest:${REST_URL}haven-made"
RREPO="rest:${REST_URL}restic-made"

check "A. haven init + backup over rest:"
run_ok hv -r "$HREPO" init
[ -f "$W/rest-plain/data/haven-made/config" ] || fail "init did not write the config through rclone"
run_ok hv -r "$HREPO" backup "$SRC"

check "A. restic check --read-data on haven's repository"
run_ok r -r "$HREPO" check --read-data
assert_grep 'no errors were found' "$OUT"

check "A. restic restore of haven's snapshot is identical to the source"
run_ok r -r "$HREPO" restore latest --target "$W/restic-target"
compare_trees "$SRC" "$W/restic-target$SRC" "${RESTIC_CMP[@]}"

check "A. haven restore of its own snapshot (cold cache) is exact"
rm -rf "$HAVEN_CACHE_DIR"
run_ok hv -r "$HREPO" restore latest --target "$W/haven-target"
compare_trees "$SRC" "$W/haven-target$SRC"

check "B. restic init + backup over rest:"
run_ok r -r "$RREPO" init
run_ok r -r "$RREPO" backup "$SRC"

check "B. haven check --read-data on restic's repository"
run_ok hv -r "$RREPO" check --read-data
assert_grep 'no errors were found' "$OUT"

check "B. haven restore of restic's snapshot is identical to the source"
run_ok hv -r "$RREPO" restore latest --target "$W/haven-from-restic"
compare_trees "$SRC" "$W/haven-from-restic$SRC" "${RESTIC_CMP[@]}"

check "C. haven forget --prune over rest: (two more backups, keep the last)"
echo "changed" >"$SRC/hello.txt"
gen_bytes 7 3000000 >"$SRC/new-3m.bin"
run_ok hv -r "$HREPO" backup "$SRC"
rm -f "$SRC/new-3m.bin"
run_ok hv -r "$HREPO" backup "$SRC"
run_ok hv -r "$HREPO" forget --keep-last 1 --prune
assert_grep 'remove|removed|deleting|delete' "$OUT" "prune removed nothing"
run_ok r -r "$HREPO" snapshots --json
python3 -c 'import json,sys; n=len(json.load(open(sys.argv[1]))); sys.exit(0 if n==1 else "snapshots: %d" % n)' "$OUT"

check "C. restic check --read-data after haven's prune; the kept snapshot restores"
run_ok r -r "$HREPO" check --read-data
assert_grep 'no errors were found' "$OUT"
run_ok r -r "$HREPO" restore latest --target "$W/after-prune-r"
compare_trees "$SRC" "$W/after-prune-r$SRC" "${RESTIC_CMP[@]}"

check "C. restic prune on haven's repository, then haven check --read-data"
run_ok r -r "$HREPO" prune
run_ok hv -r "$HREPO" check --read-data
assert_grep 'no errors were found' "$OUT"
run_ok r -r "$HREPO" list locks --no-lock
[ ! -s "$OUT" ] || fail "locks left: $(cat "$OUT")"

# ---------------------------------------------------------------------------------------
REST_SECRET="rest-secret-$RANDOM$RANDOM"
echo "$REST_SECRET" >"$W/rest-pass"
rest_start auth --user alice --pass-file "$W/rest-pass"
AURL="$REST_URL"

check "D. credentials from HAVEN_REST_USERNAME / HAVEN_REST_PASSWORD"
export HAVEN_REST_USERNAME=alice HAVEN_REST_PASSWORD="$REST_SECRET"
run_ok hv -r "rest:${AURL}auth" init
unset HAVEN_REST_USERNAME HAVEN_REST_PASSWORD
export RESTIC_REST_USERNAME=alice RESTIC_REST_PASSWORD="$REST_SECRET"
run_ok hv -r "rest:${AURL}auth" -o rest.connections=2 backup "$SRC"
unset RESTIC_REST_USERNAME RESTIC_REST_PASSWORD
expect_exit 1 hv -r "rest:${AURL}auth" snapshots
assert_grep 'user name or password' "$ERR"

check "D. credentials in the URL (HAVEN_REPOSITORY): Location hides them; none on any command line"
AUTH_REPO="rest:${AURL/http:\/\//http://alice:$REST_SECRET@}auth"
export HAVEN_REPOSITORY="$AUTH_REPO"
# A slow restore (throttled) so that the process table can be read while haven runs.
"$HAVEN" --cache-dir "$W/cache-slow" --limit-download 6000 \
  restore latest --target "$W/slow-target" >"$W/out.slow" 2>"$W/err.slow" &
slow=$!
seen_running=0
for _ in $(seq 40); do
  kill -0 "$slow" 2>/dev/null || break
  seen_running=1
  for c in /proc/[0-9]*/cmdline; do
    if LC_ALL=C grep -aqF -- "$REST_SECRET" "$c" 2>/dev/null; then fail "the REST password is on a command line: $c"; fi
  done
  sleep 0.1
done
wait "$slow" || fail "restore with credentials in HAVEN_REPOSITORY failed: $(cat "$W/err.slow")"
[ "$seen_running" = 1 ] || fail "haven ended before its command lines could be read"
compare_trees "$SRC" "$W/slow-target$SRC"
run_ok hv -v snapshots
run_ok hv -v check
assert_grep 'no errors were found' "$OUT"
unset HAVEN_REPOSITORY
assert_no_secrets "$REST_SECRET"

pass "restic $RESTIC_VERSION and haven share repositories over rclone's REST server"
