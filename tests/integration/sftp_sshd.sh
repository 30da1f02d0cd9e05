#!/usr/bin/env bash
# The sftp: backend end to end through ssh: a real sshd on a loopback port (started by
# tests/tools/start_sshd.sh with keys generated in the work dir; package openssh-server).
#   1. haven init + backup over sftp://USER@127.0.0.1:PORT//abs/path (ssh -p PORT -l USER, key
#      auth through -o sftp.args) -> haven check --read-data, restore identical
#   2. restic 0.14 over the same ssh (sftp.command) -> check --read-data clean, restore
#      identical; haven reads the short form sftp:USER@127.0.0.1:/abs/path
#   3. a key sshd does not accept: ssh's "Permission denied" shown, exit 1, no hang
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../tools/lib.sh
source "$(dirname "$0")/../tools/lib.sh"
setup "$@"
need_restic
need_haven
need_python
need_cmd ssh openssh-client
need_cmd ssh-keygen openssh-client
if [ ! -x /usr/sbin/sshd ] || [ ! -x /usr/lib/openssh/sftp-server ]; then
  log "installing openssh-server, openssh-sftp-server"
  _apt_install openssh-server openssh-sftp-server
fi
[ -x /usr/sbin/sshd ] || fail "/usr/sbin/sshd is missing (package openssh-server)"
CMD_TIMEOUT=120

S="$W/sshd"
"$TOOLS/start_sshd.sh" "$S" &
bg_track $!
for _ in $(seq 1 100); do
  if [ -s "$S/port" ] && python3 -c 'import socket,sys; socket.create_connection(("127.0.0.1",int(sys.argv[1])),0.2)' "$(cat "$S/port")" 2>/dev/null; then
    break
  fi
  sleep 0.1
done
PORT=$(cat "$S/port" 2>/dev/null) || fail "start_sshd.sh wrote no port: $(cat "$S/sshd.log" 2>/dev/null)"
SSH_ARGS=$(cat "$S/ssh_args")
ME=$(id -un)
log "sshd on 127.0.0.1:$PORT"
# shellcheck disable=SC2086  # SSH_ARGS is a list of options
timeout 20 ssh $SSH_ARGS -p "$PORT" "$ME@127.0.0.1" true || fail "ssh to the test sshd failed: $(cat "$S/sshd.log")"

SRC="$W/src"
write_generation "$SRC" 1 20 100 $((2 << 20)) $((200 << 10))
ln -s stable/f00.txt "$SRC/link"
mkdir -p "$SRC/empty-dir"

check "1. haven init + backup through ssh (sftp:// form, port and user from the URL)"
URL="sftp://$ME@127.0.0.1:$PORT/$W/repo"   # $W is absolute: the path part starts with //
run_ok hv -r "$URL" -o "sftp.args=$SSH_ARGS" init
run_ok hv -r "$URL" -o "sftp.args=$SSH_ARGS" backup "$SRC"
[ -f "$W/repo/config" ] || fail "no config at $W/repo"
run_ok hv -r "$URL" -o "sftp.args=$SSH_ARGS" check --read-data
assert_grep 'no errors were found' "$OUT"
run_ok hv -r "$URL" -o "sftp.args=$SSH_ARGS" restore latest --target "$W/t-haven"
compare_trees "$SRC" "$W/t-haven$SRC"

check "2. restic through the same ssh; haven with the short form"
RESTIC_SSH="ssh $SSH_ARGS -p $PORT $ME@127.0.0.1 -s sftp"
run_ok r -r "sftp:$ME@127.0.0.1:$W/repo" -o "sftp.command=$RESTIC_SSH" check --read-data
assert_grep 'no errors were found' "$OUT"
run_ok r -r "sftp:$ME@127.0.0.1:$W/repo" -o "sftp.command=$RESTIC_SSH" restore latest --target "$W/t-restic"
compare_trees "$SRC" "$W/t-restic$SRC" "${RESTIC_CMP[@]}"
run_ok r -r "sftp:$ME@127.0.0.1:$W/repo" -o "sftp.command=$RESTIC_SSH" backup "$SRC/stable"
run_ok hv -r "sftp:$ME@127.0.0.1:$W/repo" -o "sftp.args=-p $PORT $SSH_ARGS" snapshots --json
python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); assert len(s)==2, s' "$OUT" || fail "haven does not see restic's snapshot"

check "3. a key the server refuses: ssh's message, exit 1, no hang"
ssh-keygen -q -t ed25519 -N '' -f "$W/other_key" </dev/null
BAD_ARGS="${SSH_ARGS/-i $S\/client_key/-i $W/other_key}"
[ "$BAD_ARGS" != "$SSH_ARGS" ] || fail "could not swap the key in: $SSH_ARGS"
start=$SECONDS
CMD_TIMEOUT=40 expect_exit 1 hv -r "$URL" -o "sftp.args=$BAD_ARGS" snapshots
[ $((SECONDS - start)) -lt 30 ] || fail "haven took $((SECONDS - start)) s to give up"
assert_grep 'Permission denied' "$ERR" "ssh's message is not shown"
assert_grep 'exited with status 255' "$ERR"

pass "haven and restic $RESTIC_VERSION over a real ssh connection"
