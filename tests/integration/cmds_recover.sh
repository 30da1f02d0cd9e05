#!/usr/bin/env bash
# recover: after a snapshot file is lost, haven's recover writes restic's snapshot of the
# unreferenced root trees (path /recover, tag recovered, one directory per root named by its
# short id); restic lists and restores the old tree from it and checks the repository
# clean; restic's recover on a copy of the same damaged repository finds the same roots; a
# second recover finds none.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../tools/lib.sh
source "$(dirname "$0")/../tools/lib.sh"
setup "$@"
need_restic
need_haven
need_python

REPO="$W/repo"
SRC="$W/src"
mkdir -p "$SRC/a/b"
printf 'one\n' >"$SRC/a/f1"
gen_bytes 3 1500000 >"$SRC/a/b/big"
run_ok hv -r "$REPO" init --scrypt 1024,8,1
run_ok r -r "$REPO" backup --time '2022-01-01 10:00:00' "$SRC"
cp -a "$SRC" "$W/src1"
printf 'two\n' >"$SRC/a/f2"
run_ok hv -r "$REPO" backup --time '2022-01-02 10:00:00' "$SRC"
SNAP1=$(r -r "$REPO" snapshots --json | python3 -c '
import json, sys
print(min(json.load(sys.stdin), key=lambda s: s["time"])["id"])')
TREE1=$(r -r "$REPO" cat snapshot "$SNAP1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["tree"])')
rm "$REPO/snapshots/$SNAP1"
cp -a "$REPO" "$W/repo-restic"

check "haven recover: one root, restic's snapshot"
run_ok hv -r "$REPO" recover
assert_grep '^found 1 unreferenced roots$' "$OUT"
assert_grep '^saved new snapshot [0-9a-f]{8}$' "$OUT"
NEW=$(sed -n 's/^saved new snapshot //p' "$OUT")
r -r "$REPO" snapshots --json "$NEW" | python3 -c '
import json, socket, sys
s = json.load(sys.stdin)[0]
assert s["paths"] == ["/recover"], s
assert s["tags"] == ["recovered"], s
assert s["hostname"] == socket.gethostname(), s
' || fail "snapshot fields"
run_ok r -r "$REPO" ls "$NEW"
assert_grep "^/${TREE1:0:8}$" "$OUT"
assert_grep "^/${TREE1:0:8}$SRC/a/b/big$" "$OUT"
run_ok r -r "$REPO" restore "$NEW" --target "$W/restored"
diff -r "$W/src1" "$W/restored/${TREE1:0:8}$SRC" || fail "recovered tree differs from the lost snapshot's"
run_ok r -r "$REPO" check --read-data

check "restic's recover on the same damaged repository finds the same root"
run_ok r -r "$W/repo-restic" recover
assert_grep '^found 1 unreferenced roots$' "$OUT"
RNEW=$(sed -n 's/^saved new snapshot //p' "$OUT")
r -r "$W/repo-restic" ls --json "$RNEW" | python3 -c 'import sys; [print(l.strip()) for l in sys.stdin if "\"struct_type\":\"node\"" in l and "\"mtime\"" in l]' \
  | sed -E 's/"(mtime|atime|ctime)":"[^"]*"//g' >"$W/ls.r"
r -r "$REPO" ls --json "$NEW" | python3 -c 'import sys; [print(l.strip()) for l in sys.stdin if "\"struct_type\":\"node\"" in l and "\"mtime\"" in l]' \
  | sed -E 's/"(mtime|atime|ctime)":"[^"]*"//g' >"$W/ls.h"
diff "$W/ls.r" "$W/ls.h" || fail "recovered trees differ from restic's"

check "nothing left to recover"
run_ok r -r "$REPO" recover
# without restic's progress bar (its line and the empty line its end adds)
awk '/trees loaded/ {skip = 1; next} skip && $0 == "" {skip = 0; next} {skip = 0; print}' "$OUT" >"$W/recover.r"
run_ok hv -r "$REPO" recover
diff "$W/recover.r" "$OUT" || fail "second recover: not restic's text"
assert_grep '^found 0 unreferenced roots$' "$OUT"
assert_grep '^no snapshot to write\.$' "$OUT"
pass
