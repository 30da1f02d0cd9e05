#!/usr/bin/env bash
# repair packs (restic 0.16; restic 0.14 has no such command, so the result is judged by
# restic 0.14's check --read-data): a data pack with one flipped byte is salvaged: its
# intact blobs move to new packs, the index drops it, the pack is removed and a copy is
# left in the current folder; `repair snapshots --forget` then drops the lost blob's file
# and restic's check --read-data is clean; the other files restore intact. Bad ids fail.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../tools/lib.sh
source "$(dirname "$0")/../tools/lib.sh"
setup "$@"
need_restic
need_haven
need_python

REPO="$W/repo"
SRC="$W/src"
mkdir -p "$SRC"
for i in 1 2 3 4 5 6; do gen_bytes "$i" 300000 >"$SRC/f$i"; done
run_ok hv -r "$REPO" init --scrypt 1024,8,1
run_ok hv -r "$REPO" backup "$SRC"
PACK=$(python3 - "$REPO" <<'PYEOF'
import os, sys
best = max(((os.path.getsize(os.path.join(dp, f)), f) for dp, _, fs in os.walk(os.path.join(sys.argv[1], "data")) for f in fs))
print(best[1])
PYEOF
)
P="$REPO/data/${PACK:0:2}/$PACK"
chmod u+w "$P"
python3 - "$P" <<'PYEOF'
import os, sys
p = sys.argv[1]
with open(p, "r+b") as f:
    n = os.path.getsize(p)
    f.seek(n // 2)
    b = f.read(1)
    f.seek(n // 2)
    f.write(bytes([b[0] ^ 0x10]))
PYEOF
expect_exit 1 r -r "$REPO" check --read-data

check "repair packs salvages the intact blobs"
mkdir -p "$W/cwd"
cd "$W/cwd"
run_ok hv -r "$REPO" repair packs "$PACK"
cd "$W"
assert_grep '^saving backup copies of pack files in current folder$' "$ERR"
assert_grep '^salvaging intact data from specified pack files$' "$ERR"
assert_grep '^failed to load blob [0-9a-f]{64}: ' "$ERR"
assert_grep '^removing salvaged pack files$' "$ERR"
assert_grep 'repair snapshots --forget' "$ERR"
[ -f "$W/cwd/pack-$PACK" ] || fail "no backup copy of the pack in the current folder"
[ ! -e "$P" ] || fail "damaged pack not removed"
# The snapshot still names the lost blob: check says so until repair snapshots.
expect_exit 1 r -r "$REPO" check

check "repair snapshots --forget, then restic's check --read-data is clean"
run_ok hv -r "$REPO" repair snapshots --forget
run_ok r -r "$REPO" check --read-data
run_ok hv -r "$REPO" check --read-data
run_ok r -r "$REPO" restore latest --target "$W/restored"
intact=0
for i in 1 2 3 4 5 6; do
  if cmp -s "$SRC/f$i" "$W/restored$SRC/f$i"; then intact=$((intact + 1)); fi
done
[ "$intact" = 5 ] || fail "expected 5 intact files after the repair, got $intact"

check "bad input"
expect_exit 1 hv -r "$REPO" repair packs
assert_grep 'no ids specified' "$ERR"
expect_exit 1 hv -r "$REPO" repair packs abc
assert_grep 'invalid length for ID' "$ERR"
pass
