#!/usr/bin/env bash
# The rclone: backend (haven starts `rclone serve restic --stdio REMOTE:PATH` and speaks
# HTTP/2 over its stdin/stdout), both ways with restic 0.14's own rclone: backend, on a local
# rclone remote (a config with `type = local`, RCLONE_CONFIG):
#   A. haven init + backup of make_tree -> restic check --read-data clean, restic restore
#      identical; haven restore (cold cache) exact
#   B. restic init + backup -> haven check --read-data clean, haven restore identical
#   C. forget --prune over rclone: (haven) -> restic check --read-data clean
#   D. rclone missing (-o rclone.program=), rclone failing (a bad flag in -o rclone.args=, an
#      unknown remote): exit 1, rclone's own message shown, no hang; no rclone left running
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
printf '[mylocal]\ntype = local\n' >"$W/rclone.conf"
export RCLONE_CONFIG="$W/rclone.conf"

SRC="$W/src"
make_tree "$SRC"
HREPO="rclone:mylocal:$W/haven-made"
RREPO="rclone:mylocal:$W/restic-made"

# rclone processes whose command line names this test's work dir.
our_rclones() {
  local c
  for c in /proc/[0-9]*/cmdline; do
    if { tr '\0' ' ' <"$c"; } 2>/dev/null | grep -q "^rclone .*$W"; then echo "$c"; fi
  done
}

check "A. haven init + backup over rclone:"
run_ok hv -r "$HREPO" init
[ -f "$W/haven-made/config" ] && [ -d "$W/haven-made/data" ] || fail "init did not write restic's layout through rclone"
run_ok hv -r "$HREPO" backup "$SRC"
[ -z "$(our_rclones)" ] || fail "rclone still runs after haven ended: $(our_rclones)"

check "A. restic check --read-data over its rclone: backend on haven's repository"
run_ok r -r "$HREPO" check --read-data
assert_grep 'no errors were found' "$OUT"

check "A. restic restore of haven's snapshot is identical to the source"
run_ok r -r "$HREPO" restore latest --target "$W/restic-target"
compare_trees "$SRC" "$W/restic-target$SRC" "${RESTIC_CMP[@]}"

check "A. haven restore of its own snapshot (cold cache) is exact"
rm -rf "$HAVEN_CACHE_DIR"
run_ok hv -r "$HREPO" restore latest --target "$W/haven-target"
compare_trees "$SRC" "$W/haven-target$SRC"

check "B. restic init + backup over rclone:"
run_ok r -r "$RREPO" init
run_ok r -r "$RREPO" backup "$SRC"

check "B. haven check --read-data and restore of restic's repository over rclone:"
run_ok hv -r "$RREPO" check --read-data
assert_grep 'no errors were found' "$OUT"
run_ok hv -r "$RREPO" restore latest --target "$W/haven-from-restic"
compare_trees "$SRC" "$W/haven-from-restic$SRC" "${RESTIC_CMP[@]}"

check "C. haven forget --prune over rclone:, then restic check --read-data"
echo "changed" >"$SRC/hello.txt"
gen_bytes 5 2000000 >"$SRC/new-2m.bin"
run_ok hv -r "$HREPO" backup "$SRC"
rm -f "$SRC/new-2m.bin"
run_ok hv -r "$HREPO" backup "$SRC"
run_ok hv -r "$HREPO" forget --keep-last 1 --prune
run_ok r -r "$HREPO" check --read-data
assert_grep 'no errors were found' "$OUT"
run_ok r -r "$HREPO" snapshots --json
python3 -c 'import json,sys; n=len(json.load(open(sys.argv[1]))); sys.exit(0 if n==1 else "snapshots: %d" % n)' "$OUT"

check "D. rclone missing: exit 1, a clear message"
expect_exit 1 hv -r "$HREPO" -o rclone.program=/nonexistent/rclone snapshots
assert_grep 'cannot run /nonexistent/rclone' "$ERR"

check "D. rclone failing (a bad flag): exit 1, rclone's message and exit status shown, no hang"
start=$SECONDS
expect_exit 1 hv -r "$HREPO" -o "rclone.args=serve restic --stdio --no-such-flag" snapshots
assert_grep 'no-such-flag' "$ERR"
assert_grep 'exited with status' "$ERR"
[ $((SECONDS - start)) -lt 20 ] || fail "took $((SECONDS - start)) s"

check "D. an unknown remote: exit 1, rclone's message shown"
expect_exit 1 hv -r "rclone:no-such-remote:x" snapshots
assert_grep 'no-such-remote' "$ERR"
assert_grep 'exited with status' "$ERR"
[ -z "$(our_rclones)" ] || fail "rclone still runs: $(our_rclones)"
assert_no_secrets

pass "restic $RESTIC_VERSION and haven share repositories over rclone:"
