#!/usr/bin/env bash
# Content-defined chunking and blob ids must match restic's exactly, so the same file backed
# up by one tool and then by the other adds no data blob:
#   A. restic init; restic backup dirA (20 MiB file with internal repetition + 3 MiB file);
#      haven backup dirB (the same files under other names and paths, no parent)
#      -> number of distinct data blobs (restic list blobs) unchanged, restic check clean.
#   B. the other way round in a haven-created repository.
# Data blobs are counted with `restic list blobs` (the index's view, used as the referee):
#   restic list blobs | awk '$1=="data"' | sort -u | wc -l
# The index may list a blob twice if two packs hold it, hence sort -u; a new blob would show
# up as a new id, which is what we test.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../tools/lib.sh
source "$(dirname "$0")/../tools/lib.sh"
setup "$@"
need_restic
need_haven
need_python

mkdir -p "$W/dirA" "$W/dirB/nested"
python3 - "$W/dirA" <<'EOF'
import os, random, sys
d = sys.argv[1]
a = random.Random(11).randbytes(8 << 20)
with open(os.path.join(d, "big20m.bin"), "wb") as f:   # A(8) B(4) A(8) = 20 MiB
    f.write(a); f.write(random.Random(12).randbytes(4 << 20)); f.write(a)
with open(os.path.join(d, "three.bin"), "wb") as f:
    f.write(random.Random(13).randbytes(3 << 20))
EOF
cp "$W/dirA/big20m.bin" "$W/dirB/copy-of-big"
cp "$W/dirA/three.bin" "$W/dirB/nested/copy-of-three"
touch -d '2020-01-01T00:00:00Z' "$W/dirB/copy-of-big"   # different metadata, same content

data_blobs() { # data_blobs REPO -> distinct data blob ids on stdout
  r -r "$1" list blobs | awk '$1 == "data" {print $2}' | LC_ALL=C sort -u
}
count_packs() { find "$1/data" -type f | wc -l; }

# --- A: restic first, then haven -------------------------------------------------------
REPO="$W/repo-restic-first"
check "A: restic init + restic backup dirA"
run_ok r -r "$REPO" init
run_ok r -r "$REPO" backup "$W/dirA"
data_blobs "$REPO" >"$W/a-before.txt"
n_before=$(wc -l <"$W/a-before.txt")
log "A: $n_before distinct data blobs after restic's backup"
[ "$n_before" -ge 5 ] || fail "A: suspiciously few data blobs ($n_before) for 23 MiB of random data"
packs_before=$(count_packs "$REPO")

check "A: haven backup dirB (same content) adds no data blob"
run_ok hv -r "$REPO" backup "$W/dirB"
data_blobs "$REPO" >"$W/a-after.txt"
n_after=$(wc -l <"$W/a-after.txt")
if ! diff -u "$W/a-before.txt" "$W/a-after.txt" >"$W/a.diff"; then
  head -20 "$W/a.diff"
  fail "A: haven added $((n_after - n_before)) data blob(s) for content restic already stored"
fi
log "A: $n_after distinct data blobs after haven's backup (unchanged)"
log "A: packs $packs_before -> $(count_packs "$REPO") (new packs may hold trees only)"
run_ok r -r "$REPO" check --read-data
assert_grep 'no errors were found' "$OUT"
run_ok r -r "$REPO" snapshots --json
python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); assert len(s)==2, len(s)' "$OUT" \
  || fail "A: expected 2 snapshots"

# --- B: haven first, then restic -------------------------------------------------------
REPO="$W/repo-haven-first"
check "B: haven init + haven backup dirA"
run_ok hv -r "$REPO" init
run_ok hv -r "$REPO" backup "$W/dirA"
data_blobs "$REPO" >"$W/b-before.txt"
n_before=$(wc -l <"$W/b-before.txt")
log "B: $n_before distinct data blobs after haven's backup"
[ "$n_before" -ge 5 ] || fail "B: suspiciously few data blobs ($n_before) for 23 MiB of random data"
# the two repositories have different chunker polynomials, so the counts need not agree;
# within each repository the same content must give the same blobs whoever writes it.

check "B: restic backup dirB (same content) adds no data blob"
run_ok r -r "$REPO" backup "$W/dirB"
assert_grep 'Added to the repository: [0-9.]+ (B|KiB)' "$OUT" \
  "B: restic reported adding more than a few KiB (trees only expected)"
data_blobs "$REPO" >"$W/b-after.txt"
if ! diff -u "$W/b-before.txt" "$W/b-after.txt" >"$W/b.diff"; then
  head -20 "$W/b.diff"
  fail "B: restic added data blob(s) for content haven already stored: haven's chunks/blob ids differ from restic's"
fi
run_ok r -r "$REPO" check --read-data
assert_grep 'no errors were found' "$OUT"

check "B: haven backup of dirA again (haven's own dedup) adds no data blob"
run_ok hv -r "$REPO" backup --force "$W/dirA"
data_blobs "$REPO" >"$W/b-after2.txt"
diff -u "$W/b-before.txt" "$W/b-after2.txt" >/dev/null || fail "B: haven re-added data it already stored"

pass "restic and haven deduplicate against each other's data"
