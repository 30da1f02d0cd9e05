#!/usr/bin/env bash
# check finds and names damage (issue 4), and haven's synthetic repository generator
# writes repositories restic accepts:
#   G. `haven debug gen-repo` (small) -> restic check --read-data and haven check
#      --read-data clean; restic and haven list the same files in the latest snapshot
#   1. a deleted pack          -> exit 1, "pack <id>: does not exist"
#   2. a truncated pack        -> exit 1, "pack <id>: size is ... but the index describes ..."
#   3. a flipped byte in a pack -> check --read-data exit 1 naming the pack and the blob
#   4. a tree referencing a blob missing from the index (its pack deleted, index
#      rebuilt) -> exit 1 naming the snapshot, the tree, the file and the blob
# restic check fails on every damaged copy too.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../tools/lib.sh
source "$(dirname "$0")/../tools/lib.sh"
setup "$@"
need_restic
need_haven
need_python

# ---------------------------------------------------------------------------------------
check "G. gen-repo output is a valid restic repository"
RG="$W/repo-gen"
run_ok hv -r "$RG" init
run_ok hv -r "$RG" debug gen-repo --seed 7 --dirs 300 --files 3 --blobs 4 --snapshots 3 --changed-dirs 20
assert_grep 'generated 3[0-9]{3} data blobs, [0-9]+ trees, 3 snapshots' "$OUT" "G: unexpected generator summary"
run_ok r -r "$RG" check --read-data
run_ok hv -r "$RG" check --read-data
run_ok r -r "$RG" ls latest
sort "$OUT" | grep '^/' >"$W/g-restic.txt"
run_ok hv -r "$RG" ls latest
sort "$OUT" | grep '^/' >"$W/g-haven.txt"
cmp -s "$W/g-restic.txt" "$W/g-haven.txt" || { diff "$W/g-restic.txt" "$W/g-haven.txt" | head; fail "G: ls differs"; }
[ "$(wc -l <"$W/g-haven.txt")" -gt 1000 ] || fail "G: too few entries in the latest snapshot"
check "G: the same seed gives the same snapshot trees"
RG2="$W/repo-gen2"
run_ok hv -r "$RG2" init
run_ok hv -r "$RG2" debug gen-repo --seed 7 --dirs 300 --files 3 --blobs 4 --snapshots 3 --changed-dirs 20
run_ok hv -r "$RG" snapshots --json
python3 -c 'import json,sys; print(sorted(s["tree"] for s in json.load(open(sys.argv[1]))))' "$OUT" >"$W/t1"
run_ok hv -r "$RG2" snapshots --json
python3 -c 'import json,sys; print(sorted(s["tree"] for s in json.load(open(sys.argv[1]))))' "$OUT" >"$W/t2"
cmp -s "$W/t1" "$W/t2" || fail "G: same seed, different trees"
rm -rf "$RG" "$RG2"

# ---------------------------------------------------------------------------------------
SRC="$W/src"
mkdir -p "$SRC/docs"
for i in $(seq 1 20); do echo "document $i" >"$SRC/docs/d$i.txt"; done
gen_bytes 1 3000000 >"$SRC/big.bin"
R="$W/repo"
run_ok hv -r "$R" init
run_ok hv -r "$R" backup "$SRC"
packs_of() { (cd "$1/data" && find . -type f -printf '%s %P\n' | sort -n); }
packs_of "$R" >"$W/p1"
gen_bytes 2 2000000 >"$SRC/new.bin"
run_ok hv -r "$R" backup "$SRC"
packs_of "$R" >"$W/p2"
# The second backup wrote one data pack (new.bin, the larger) and one tree pack.
NEWDATA="$(grep -vxFf "$W/p1" "$W/p2" | sort -n | tail -n 1 | cut -d' ' -f2)"
BIGDATA="$(sort -n "$W/p1" | tail -n 1 | cut -d' ' -f2)"
[ -n "$NEWDATA" ] && [ -n "$BIGDATA" ] || fail "could not find the data packs"
NEWID="$(basename "$NEWDATA")"
BIGID="$(basename "$BIGDATA")"
run_ok hv -r "$R" snapshots --json
SNAP2="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[-1]["short_id"])' "$OUT")"
run_ok hv -r "$R" check --read-data

check "1. deleted pack"
R1="$W/r1"; cp -a "$R" "$R1"
rm "$R1/data/$NEWDATA"
expect_exit 1 hv -r "$R1" check
assert_grep "pack $NEWID: does not exist" "$ERR" "1: deleted pack not named"
expect_exit 1 r -r "$R1" check

check "2. truncated pack"
R2="$W/r2"; cp -a "$R" "$R2"
truncate -s -100 "$R2/data/$BIGDATA"
expect_exit 1 hv -r "$R2" check
assert_grep "pack $BIGID: size is [0-9]+ bytes but the index describes [0-9]+" "$ERR" "2: truncated pack not named"
expect_exit 1 r -r "$R2" check

check "3. flipped byte"
R3="$W/r3"; cp -a "$R" "$R3"
python3 - "$R3/data/$BIGDATA" <<'PY'
import sys
p = sys.argv[1]
with open(p, "r+b") as f:
    f.seek(1000000)
    b = f.read(1)
    f.seek(1000000)
    f.write(bytes([b[0] ^ 0x40]))
PY
expect_exit 1 hv -r "$R3" check --read-data
assert_grep "pack $BIGID: content does not match its id" "$ERR" "3: pack hash mismatch not reported"
assert_grep "blob [0-9a-f]{64} in pack $BIGID: ciphertext verification failed" "$ERR" "3: damaged blob not named"
expect_exit 1 r -r "$R3" check --read-data

check "4. tree referencing a blob missing from the index"
R4="$W/r4"; cp -a "$R" "$R4"
rm "$R4/data/$NEWDATA"
run_ok hv -r "$R4" repair index
expect_exit 1 hv -r "$R4" check
assert_grep "snapshot $SNAP2: tree [0-9a-f]{64}: file /.*/new\.bin blob [0-9a-f]{64} is not in the index" "$ERR" \
  "4: missing blob not named with snapshot, tree and file"
if grep -q 'big\.bin' "$ERR"; then fail "4: blobs of big.bin reported missing"; fi
expect_exit 1 r -r "$R4" check

pass
