#!/usr/bin/env bash
# rest: with bad input, against `rclone serve restic` (tests/tools/rclone-rest-start):
#   wrong / missing REST password -> exit 1, a clear message, the password never printed
#   missing repository at the URL -> exit 10; wrong repository password -> exit 12
#   append-only server: backup works; forget (a snapshot removal) and forget --prune are
#     refused with a message naming the file (exit 1); the repository checks clean (haven and
#     restic)
#   the server gone mid-backup: bounded retries, then exit 1 with a clear error, no hang;
#     the repository checks clean afterwards (haven and restic, server started again; the
#     stale lock removed by unlock)
#   bad locations and options: exit 1
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

mkdir -p "$W/src" && echo hello >"$W/src/a"
REST_SECRET="rest-secret-$RANDOM$RANDOM"
echo "$REST_SECRET" >"$W/rest-pass"
rest_start auth --user bob --pass-file "$W/rest-pass"
export HAVEN_REST_USERNAME=bob HAVEN_REST_PASSWORD="$REST_SECRET"
run_ok hv -r "rest:${REST_URL}repo" init
run_ok hv -r "rest:${REST_URL}repo" backup "$W/src"

check "wrong REST password: exit 1, a clear message, no password printed"
WRONG="wrong-$RANDOM$RANDOM"
export HAVEN_REST_PASSWORD="$WRONG"
expect_exit 1 hv -r "rest:${REST_URL}repo" snapshots
assert_grep 'refused the user name or password' "$ERR"
assert_grep '401' "$ERR"
check "no REST password: exit 1, the same message"
unset HAVEN_REST_USERNAME HAVEN_REST_PASSWORD
expect_exit 1 hv -r "rest:${REST_URL}repo" snapshots
assert_grep 'refused the user name or password' "$ERR"
export HAVEN_REST_USERNAME=bob HAVEN_REST_PASSWORD="$REST_SECRET"

check "missing repository: exit 10; wrong repository password: exit 12"
expect_exit 10 hv -r "rest:${REST_URL}no-such-repo" snapshots
expect_exit 12 env HAVEN_PASSWORD=not-the-password "$HAVEN" --no-cache -r "rest:${REST_URL}repo" snapshots
assert_no_secrets "$REST_SECRET" "$WRONG"
unset HAVEN_REST_USERNAME HAVEN_REST_PASSWORD

# ---------------------------------------------------------------------------------------
check "append-only: backup works"
rest_start plain
run_ok hv -r "rest:${REST_URL}ao" init
run_ok hv -r "rest:${REST_URL}ao" backup "$W/src"
rest_stop plain
rest_start plain --append-only
AO="rest:${REST_URL}ao"
echo more >"$W/src/b"
run_ok hv -r "$AO" backup "$W/src"
run_ok hv -r "$AO" snapshots --json
FIRST=$(python3 -c 'import json,sys; print(sorted(json.load(open(sys.argv[1])), key=lambda s: s["time"])[0]["id"])' "$OUT")

check "append-only: forget of a snapshot is refused naming the file"
expect_exit 1 hv -r "$AO" forget "$FIRST"
assert_grep "snapshots/$FIRST" "$ERR"
assert_grep 'append-only' "$ERR"

check "append-only: forget --prune is refused, naming the file"
expect_exit 1 hv -r "$AO" forget --keep-last 1 --prune
assert_grep 'snapshots/[0-9a-f]{64}' "$ERR"
assert_grep 'append-only' "$ERR"

check "append-only: the repository checks clean (haven and restic), both snapshots kept"
run_ok hv -r "$AO" check --read-data
assert_grep 'no errors were found' "$OUT"
run_ok r -r "$AO" check --read-data
assert_grep 'no errors were found' "$OUT"
run_ok r -r "$AO" snapshots --json
python3 -c 'import json,sys; n=len(json.load(open(sys.argv[1]))); sys.exit(0 if n==2 else "snapshots: %d" % n)' "$OUT"

# ---------------------------------------------------------------------------------------
check "the server gone mid-backup: bounded retries, exit 1, no hang"
rest_start gone
GONE="rest:${REST_URL}gone"
run_ok hv -r "$GONE" init
mkdir -p "$W/big"
gen_bytes 3 40000000 >"$W/big/data.bin"
start=$SECONDS
"$HAVEN" --cache-dir "$HAVEN_CACHE_DIR" -r "$GONE" --limit-upload 4000 backup "$W/big" >"$W/out.gone" 2>"$W/err.gone" &
bk=$!
bg_track $bk
sleep 3
kill -0 $bk 2>/dev/null || fail "the backup ended before the server was stopped: $(cat "$W/err.gone")"
rest_stop gone
rc=0
for _ in $(seq 90); do kill -0 $bk 2>/dev/null || break; sleep 1; done
kill -0 $bk 2>/dev/null && fail "haven still runs $((SECONDS - start)) s after the server went away"
wait $bk || rc=$?
took=$((SECONDS - start))
[ "$rc" = 1 ] || { cat "$W/err.gone" >&2; fail "backup exited $rc, wanted 1"; }
assert_grep 'gave up after [0-9]+ attempts' "$W/err.gone"
assert_grep "Couldn't connect|Connection refused|Failed to connect" "$W/err.gone"
log "server gone: haven gave up after $took s"

check "the server back (new port): the repository checks clean (haven and restic)"
rest_start gone
GONE="rest:${REST_URL}gone"
# The lock of the backup that gave up stays behind (as with restic): unlock removes it as stale.
run_ok hv -r "$GONE" unlock
run_ok hv -r "$GONE" check
assert_grep 'no errors were found' "$OUT"
run_ok r -r "$GONE" check --read-data
assert_grep 'no errors were found' "$OUT"

check "bad locations and options: exit 1"
expect_exit 1 hv -r "rest:ftp://127.0.0.1/x" snapshots
expect_exit 1 hv -r "rest:${REST_URL}repo" -o rest.connections=0 snapshots
expect_exit 1 hv -r "rest:${REST_URL}repo" -o rest.bogus=1 snapshots
assert_no_secrets "$REST_SECRET" "$WRONG"

pass "bad input on rest: is reported clearly"
