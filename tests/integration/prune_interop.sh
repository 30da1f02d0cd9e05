#!/usr/bin/env bash
# prune and repair index, both ways with restic (RELIABILITY.md cases 6, 7, 15):
#   A. restic repository, 3 backups of a changing tree, restic forget --keep-last 1
#      -> haven prune removes data; restic check --read-data clean; restic and haven restore
#      the remaining snapshot identical to the source; a second haven prune has nothing to do
#   B. haven repository, 3 haven backups, restic forget + restic prune
#      -> haven check --read-data clean; haven restore identical
#   C. haven prune --dry-run changes nothing (file listing and contents identical)
#   D. haven refuses to prune when a needed pack is missing (nothing deleted, exit 1)
#   E. restic repository with its index files deleted -> haven repair index
#      -> restic check --read-data clean; haven repair index --read-all-packs too
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../tools/lib.sh
source "$(dirname "$0")/../tools/lib.sh"
setup "$@"
need_restic
need_haven
need_python

SRC="$W/src"

# generation GEN: rewrite $SRC into its state number GEN (deterministic). Files come and go,
# some change, most stay; big random files make packs worth repacking.
generation() {
  python3 - "$SRC" "$1" <<'EOF'
import os, random, shutil, sys
root, gen = sys.argv[1], int(sys.argv[2])
os.makedirs(root, exist_ok=True)
def write(rel, data):
    p = os.path.join(root, rel)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "wb") as f:
        f.write(data)
def rnd(seed, n):
    return random.Random(seed).randbytes(n)
# stable part
for i in range(20):
    write("stable/file%02d.txt" % i, ("stable file %d\n" % i).encode() * (50 + i))
write("stable/big.bin", rnd(1, 3 << 20))
# changing part: replaced every generation
shutil.rmtree(os.path.join(root, "gen"), ignore_errors=True)
for i in range(5):
    write("gen/g%d-%d.bin" % (gen, i), rnd(1000 * gen + i, 600 << 10))
write("gen/notes.txt", ("generation %d\n" % gen).encode() * 1000)
# a file growing by one generation's chunk
write("growing.bin", b"".join(rnd(50 + g, 1 << 20) for g in range(gen + 1)))
EOF
  find "$SRC" -exec touch -h -d "2021-0$((1 + $1))-02T03:04:05.123456789Z" {} +
}

# listing DIR: every file with size and hash, locks excluded.
listing() {
  (cd "$1" && find . -type f ! -path './locks/*' -print0 | LC_ALL=C sort -z | xargs -0 sha256sum)
}

# ---------------------------------------------------------------------------------------
check "A. restic repo, 3 backups, restic forget 2, haven prune"
RA="$W/repo-a"
run_ok r -r "$RA" init
for g in 1 2 3; do
  generation "$g"
  run_ok r -r "$RA" backup "$SRC"
done
run_ok r -r "$RA" forget --keep-last 1
before=$(du -sb "$RA/data" | cut -f1)
run_ok hv -r "$RA" prune
cp "$OUT" "$W/prune-a.out"
assert_grep 'total prune' "$W/prune-a.out" "A: no statistics printed"
assert_grep 'unused size after prune' "$W/prune-a.out" "A: no statistics printed"
after=$(du -sb "$RA/data" | cut -f1)
log "A: data/ $before -> $after bytes"
[ "$after" -lt "$before" ] || fail "A: haven prune removed nothing ($before -> $after)"
[ -z "$(lock_files "$RA/locks")" ] || fail "A: lock left behind"
run_ok r -r "$RA" check --read-data
run_ok hv -r "$RA" check --read-data
run_ok r -r "$RA" restore latest --target "$W/ra-restic"
compare_trees "$SRC" "$W/ra-restic$SRC" "${RESTIC_CMP[@]}"
run_ok hv -r "$RA" restore latest --target "$W/ra-haven"
compare_trees "$SRC" "$W/ra-haven$SRC"
rm -rf "$W/ra-restic" "$W/ra-haven"
check "A: a second haven prune changes nothing"
listing "$RA" >"$W/a1.txt"
run_ok hv -r "$RA" prune
listing "$RA" >"$W/a2.txt"
cmp -s "$W/a1.txt" "$W/a2.txt" || { diff "$W/a1.txt" "$W/a2.txt" | head; fail "A: second prune changed the repository"; }
check "A: restic prune agrees there is nothing left to prune"
run_ok r -r "$RA" prune --dry-run
assert_grep 'total prune: +0 blobs' "$OUT" "A: restic would still prune something after haven's prune"

# ---------------------------------------------------------------------------------------
check "B. haven repo, 3 haven backups, restic forget + restic prune, haven check"
RB="$W/repo-b"
run_ok hv -r "$RB" init
for g in 1 2 3; do
  generation "$g"
  run_ok hv -r "$RB" backup "$SRC"
done
run_ok r -r "$RB" forget --keep-last 1
run_ok r -r "$RB" prune
run_ok hv -r "$RB" check --read-data
run_ok hv -r "$RB" restore latest --target "$W/rb-haven"
compare_trees "$SRC" "$W/rb-haven$SRC"
rm -rf "$W/rb-haven"

# ---------------------------------------------------------------------------------------
check "C. haven prune --dry-run changes nothing"
RC="$W/repo-c"
run_ok hv -r "$RC" init
for g in 1 2; do
  generation "$g"
  run_ok hv -r "$RC" backup "$SRC"
done
run_ok hv -r "$RC" snapshots --json
FIRST="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[0]["id"])' "$OUT")"
run_ok r -r "$RC" forget "$FIRST"
listing "$RC" >"$W/c1.txt"
run_ok hv -r "$RC" prune --dry-run
assert_grep 'total prune' "$OUT" "C: dry run printed no statistics"
listing "$RC" >"$W/c2.txt"
cmp -s "$W/c1.txt" "$W/c2.txt" || { diff "$W/c1.txt" "$W/c2.txt" | head; fail "C: --dry-run changed the repository"; }
run_ok hv -r "$RC" prune --max-unused unlimited --max-repack-size 1M
run_ok r -r "$RC" check --read-data
run_ok hv -r "$RC" prune --max-unused 0%
run_ok r -r "$RC" check --read-data

# ---------------------------------------------------------------------------------------
check "D. haven refuses to prune with a needed pack missing; nothing deleted"
RD="$W/repo-d"
cp -a "$RB" "$RD"
P="$(cd "$RD/data" && find . -type f | head -n 1)"
rm "$RD/data/$P"
listing "$RD" >"$W/d1.txt"
expect_exit 1 hv -r "$RD" prune
assert_grep 'missing|does not exist' "$ERR" "D: no message about the missing pack"
listing "$RD" >"$W/d2.txt"
cmp -s "$W/d1.txt" "$W/d2.txt" || fail "D: refused prune changed the repository"

# ---------------------------------------------------------------------------------------
check "E. restic repo without index files -> haven repair index"
RE="$W/repo-e"
cp -a "$RA" "$RE"
rm -f "$RE"/index/*
run_ok hv -r "$RE" repair index
run_ok r -r "$RE" check --read-data
run_ok hv -r "$RE" repair index --read-all-packs
run_ok r -r "$RE" check --read-data
run_ok hv -r "$RE" check --read-data

pass "prune and repair index interoperate with restic"
