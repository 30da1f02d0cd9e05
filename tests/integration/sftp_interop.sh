#!/usr/bin/env bash
# The sftp: backend, both ways with restic, through OpenSSH's sftp-server started directly by
# -o sftp.command (no sshd; package openssh-sftp-server, scripts/install-deps):
#   A. haven init + backup of make_tree over sftp -> restic check --read-data clean, restic
#      restore identical; haven check --read-data and restore (strict) over sftp
#   B. restic init + backup over sftp -> haven check --read-data clean, haven restore identical
#   C. forget --prune over sftp (haven), then restic and haven check --read-data clean
#   D. ssh failing to connect (sftp://user:password@127.0.0.1:PORT with nothing listening) and
#      an sftp.command exiting 255 with a message: exit 1 within the time limit, the message
#      shown, the password in the URL never printed
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../tools/lib.sh
source "$(dirname "$0")/../tools/lib.sh"
setup "$@"
need_restic
need_haven
need_python
need_cmd ssh openssh-client

SFTP_SERVER=/usr/lib/openssh/sftp-server
if [ ! -x "$SFTP_SERVER" ]; then
  log "installing openssh-sftp-server"
  _apt_install openssh-sftp-server
fi
[ -x "$SFTP_SERVER" ] || fail "$SFTP_SERVER is missing (package openssh-sftp-server)"
OPT=(-o "sftp.command=$SFTP_SERVER")
CMD_TIMEOUT=120

SRC="$W/src"
make_tree "$SRC"

# ---------------------------------------------------------------------------------------
REPO_A="sftp:localhost:$W/repo-a"
check "A. haven init + backup over sftp"
run_ok hv -r "$REPO_A" "${OPT[@]}" init
[ -f "$W/repo-a/config" ] && [ -d "$W/repo-a/data/ff" ] || fail "sftp init did not write restic's layout"
run_ok hv -r "$REPO_A" "${OPT[@]}" backup "$SRC"
[ -z "$(find "$W/repo-a" -name '*-tmp-*')" ] || fail "temp files left in the repository"

check "A. restic check --read-data over sftp on haven's repository"
run_ok r -r "$REPO_A" "${OPT[@]}" check --read-data
assert_grep 'no errors were found' "$OUT" "restic check did not say 'no errors were found'"

check "A. restic restore over sftp is identical to the source"
run_ok r -r "$REPO_A" "${OPT[@]}" restore latest --target "$W/a-restic"
compare_trees "$SRC" "$W/a-restic$SRC" "${RESTIC_CMP[@]}"

check "A. haven check --read-data and restore (strict) over sftp"
run_ok hv -r "$REPO_A" "${OPT[@]}" check --read-data
run_ok hv -r "$REPO_A" "${OPT[@]}" restore latest --target "$W/a-haven"
compare_trees "$SRC" "$W/a-haven$SRC"
[ -z "$(ls -A "$W/repo-a/locks")" ] || fail "locks left behind over sftp"

# ---------------------------------------------------------------------------------------
REPO_B="sftp:localhost:$W/repo-b"
check "B. restic init + backup over sftp"
run_ok r -r "$REPO_B" "${OPT[@]}" init
run_ok r -r "$REPO_B" "${OPT[@]}" backup "$SRC"

check "B. haven check --read-data over sftp on restic's repository"
run_ok hv -r "$REPO_B" "${OPT[@]}" check --read-data
assert_grep 'no errors were found' "$OUT" "haven check did not say 'no errors were found'"

check "B. haven restore over sftp is identical to the source"
run_ok hv -r "$REPO_B" "${OPT[@]}" restore latest --target "$W/b-haven"
compare_trees "$SRC" "$W/b-haven$SRC" "${RESTIC_CMP[@]}"

# ---------------------------------------------------------------------------------------
check "C. forget --prune over sftp"
GEN="$W/gen"
for g in 1 2 3; do
  write_generation "$GEN" "$g" 10 200 $((1 << 20)) $((300 << 10))
  run_ok hv -r "$REPO_A" "${OPT[@]}" backup "$GEN"
done
before=$(find "$W/repo-a/data" -type f | wc -l)
run_ok hv -r "$REPO_A" "${OPT[@]}" forget --keep-last 1 --prune
after=$(find "$W/repo-a/data" -type f | wc -l)
[ "$after" -lt "$before" ] || fail "prune over sftp removed no pack ($before -> $after)"
run_ok hv -r "$REPO_A" "${OPT[@]}" snapshots --json
python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); g=[x for x in s if x["paths"]==[sys.argv[2]]]; assert len(s)==2 and len(g)==1, s' "$OUT" "$GEN" \
  || fail "forget --keep-last 1 did not leave one snapshot per path group"
run_ok r -r "$REPO_A" "${OPT[@]}" check --read-data
run_ok hv -r "$REPO_A" "${OPT[@]}" check --read-data
run_ok hv -r "$REPO_A" "${OPT[@]}" restore latest --target "$W/c-haven"
compare_trees "$GEN" "$W/c-haven$GEN"

# ---------------------------------------------------------------------------------------
check "D. ssh cannot connect: exit 1, ssh's message shown, no hang, no password printed"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
SSH_ARGS="-o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o ConnectTimeout=10"
SECONDS_BEFORE=$SECONDS
CMD_TIMEOUT=40 expect_exit 1 hv -r "sftp://nosuchuser:hunter2@127.0.0.1:$PORT//x" -o "sftp.args=$SSH_ARGS" snapshots
[ $((SECONDS - SECONDS_BEFORE)) -lt 30 ] || fail "haven took $((SECONDS - SECONDS_BEFORE)) s to give up"
assert_grep 'Connection refused' "$ERR" "ssh's own message is not shown"
assert_grep 'exited with status 255' "$ERR" "haven's error does not give ssh's exit status"
! grep -q hunter2 "$OUT" "$ERR" || fail "the password in the URL was printed"

check "D. a password in an sftp:// URL is printed by no message of init, open or errors"
PW_REPO="sftp://someone:hunter2@localhost/$W/repo-pw"
run_ok hv -r "$PW_REPO" "${OPT[@]}" init
cat "$OUT" "$ERR" >"$W/pw.log"
expect_exit 1 hv -r "$PW_REPO" "${OPT[@]}" init
cat "$OUT" "$ERR" >>"$W/pw.log"
expect_exit 10 hv -r "sftp://someone:hunter2@localhost/$W/no-such-repo" "${OPT[@]}" snapshots
cat "$OUT" "$ERR" >>"$W/pw.log"
run_ok hv -r "$PW_REPO" "${OPT[@]}" snapshots
cat "$OUT" "$ERR" >>"$W/pw.log"
! grep -q hunter2 "$W/pw.log" || fail "the password in the URL was printed: $(grep hunter2 "$W/pw.log")"
grep -q "someone@localhost" "$W/pw.log" || fail "the location is not named in the messages"

check "D. an sftp.command that exits 255 with a message"
CMD_TIMEOUT=40 expect_exit 1 hv -r "sftp:backup-host:/srv/repo" \
  -o "sftp.command=sh -c 'echo no route to backup-host >&2; exit 255'" snapshots
assert_grep 'no route to backup-host' "$ERR" "the command's message is not shown"
assert_grep 'exited with status 255' "$ERR"

check "D. the sftp-server dies mid-session (killed after 1 s): exit 1, clear error"
rc=0
hv -r "$REPO_B" -o "sftp.command=sh -c 'exec timeout 1 $SFTP_SERVER'" backup --stdin \
  --stdin-filename slow.bin < <(sleep 3; head -c 100000 /dev/zero) >"$W/out.dies" 2>"$W/err.dies" || rc=$?
ERR="$W/err.dies"
[ "$rc" = 1 ] || { cat "$W/out.dies" "$ERR" >&2; fail "backup with a dying server exited $rc, not 1"; }
assert_grep 'the connection is gone: the server closed the connection; .* exited with status 124' "$ERR" \
  "no clear error when the server died"
check "D. after unlock, the repository checks clean"
run_ok hv -r "$REPO_B" "${OPT[@]}" unlock
run_ok hv -r "$REPO_B" "${OPT[@]}" check --read-data

check "E. Ctrl-C (SIGINT to haven's whole process group) during a backup over sftp: exit 130, lock removed"
# The sftp command runs in its own process group, so the terminal's SIGINT does not kill it
# and haven can still remove its lock over the session.
mkfifo "$W/fifo"
setsid "$HAVEN" --cache-dir "$HAVEN_CACHE_DIR" -r "$REPO_B" "${OPT[@]}" backup --stdin \
  --stdin-filename slow.bin <"$W/fifo" >"$W/out.int" 2>"$W/err.int" &
hpid=$!
bg_track "$hpid"
exec 9>"$W/fifo"
head -c 100000 /dev/urandom >&9
wait_for_lock "$W/repo-b/locks" 30 >/dev/null || fail "no lock appeared over sftp"
sleep 0.5
kill -INT -- "-$hpid"
# End of input too: a ThreadSanitizer build runs the handler only when the thread that got
# the signal leaves its blocking read, which may be the read of this FIFO (haven exits 130
# either way: the signal came first).
exec 9>&-
rc=0
wait "$hpid" || rc=$?
[ "$rc" = 130 ] || { cat "$W/err.int" >&2; fail "interrupted backup exited $rc, not 130"; }
[ -z "$(lock_files "$W/repo-b/locks")" ] || fail "lock left behind after Ctrl-C over sftp"
[ -z "$(find "$W/repo-b" -name '*-tmp-*')" ] || log "NOTE: temp file left after Ctrl-C (removed by prune)"

check "F. sftp options are checked"
expect_exit 1 hv -r "$REPO_B" -o "sftp.connections=0" snapshots
assert_grep 'sftp.connections' "$ERR"
expect_exit 1 hv -r "$REPO_B" "${OPT[@]}" -o "sftp.layout=default" snapshots
assert_grep 'sftp.layout is not known' "$ERR"
expect_exit 1 hv -r "sftp:host:~/repo" snapshots
assert_grep "starts with '~'" "$ERR"

pass "haven and restic $RESTIC_VERSION share repositories over sftp"
