#!/usr/bin/env bash
# find: haven and restic 0.14 give the same output on the same repository
# (tests/tools/cmds_repo.sh: five snapshots of a changing tree, one written by haven):
# patterns (unanchored, anchored, several, --ignore-case), --long, --oldest/--newest,
# --json, --snapshot/latest/--host/--tag/--path selections, --tree/--blob/--pack ids (full
# and short) with --show-pack-id, and the refusals (no pattern, several id kinds, a bad
# time, an unknown pack). restic 0.14 loads the snapshots of a search over all of them in
# parallel, so their order is its listing's: those runs are compared per snapshot, or
# sorted.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../tools/lib.sh
source "$(dirname "$0")/../tools/lib.sh"
setup "$@"
need_restic
need_haven
need_python
# shellcheck source=../tools/cmds_repo.sh
source "$TOOLS/cmds_repo.sh"

REPO="$W/repo"
SRC="$W/src"
build_cmds_repo "$REPO" "$SRC"

check "patterns, per snapshot: same text and JSON as restic"
for s in "${SNAPS[@]}"; do
  same_output "find '*'" -r "$REPO" find -s "$s" '*'
  same_output "find -l" -r "$REPO" find -s "${s:0:8}" -l 's*' '*.bin'
  same_output "find --json" -r "$REPO" --json find -s "$s" 'f*' l1 'empty*'
  same_output "find anchored" -r "$REPO" find -s "$s" "$SRC/a" "$SRC/c/s*"
  same_output "find -i" -r "$REPO" find -s "$s" -i 'S1*' 'EMPTY*' '*.TXT'
  same_output "find --oldest/--newest" -r "$REPO" find -s "$s" --oldest 2021-01-01 --newest '2021-12-31 10:00' '*'
  same_output "find --newest" -r "$REPO" --json find -s "$s" --newest '01.01.2022' '*.txt'
  same_output "find no hit" -r "$REPO" find -s "$s" 'nothing-like-this'
  same_output "find no hit --json" -r "$REPO" --json find -s "$s" 'nothing-like-this'
done
run_ok hv -r "$REPO" find -s "$SNAP1" -l '*.txt'
assert_grep "^-rw-r--r-- +0 +0 +5 2021-03-04 05:06:07 $SRC/keep/k.txt$" "$OUT"
assert_grep "^Found matching entries in snapshot ${SNAP1:0:8} from 2022-01-01 10:00:00$" "$OUT"

check "selections: the same snapshots as restic (output sorted: restic's order is its listing's)"
sorted_same() {
  local what="$1"; shift
  local rc_r=0 rc_h=0
  r "$@" 2>&1 </dev/null | LC_ALL=C sort >"$W/sorted.r" || rc_r=$?
  hv "$@" 2>&1 </dev/null | LC_ALL=C sort >"$W/sorted.h" || rc_h=$?
  cmp -s "$W/sorted.r" "$W/sorted.h" || { diff "$W/sorted.r" "$W/sorted.h" | head -40 >&2; fail "$what differs"; }
}
sorted_same "find all" -r "$REPO" find '*.txt'
sorted_same "find --host" -r "$REPO" find --host h2 '*.txt' s2
sorted_same "find --tag" -r "$REPO" find --tag t2 'f*'
sorted_same "find --path" -r "$REPO" find --path "$SRC" hv.txt
same_output "find -s latest --host" -r "$REPO" find -s latest --host h2 '*.txt'
same_output "find -s twice" -r "$REPO" find -s "$SNAP2" -s "${SNAP2:0:8}" '*.txt'
same_output "find -s unknown" -r "$REPO" find -s ffffffff -s "$SNAP1" '*.txt'
same_output "find -s with filters" -r "$REPO" find -s "$SNAP1" --host h2 zero

check "ids: trees, blobs, packs, --show-pack-id"
root=$(hv -r "$REPO" cat snapshot "$SNAP2" | python3 -c 'import json,sys; print(json.load(sys.stdin)["tree"])')
sub=$(hv -r "$REPO" cat tree "$root" | python3 -c 'import json,sys; print(json.load(sys.stdin)["nodes"][0]["subtree"])')
[ -n "$sub" ] || fail "no subtree"
for s in "${SNAPS[@]}"; do
  same_output "find --tree" -r "$REPO" find -s "$s" --tree "$sub"
  same_output "find --tree short --show-pack-id" -r "$REPO" find -s "$s" --tree "${sub:0:8}" --show-pack-id
  same_output "find --tree --json" -r "$REPO" --json find -s "$s" --tree "$sub" 0123abcd
done
mapfile -t blobs < <(r -r "$REPO" list blobs | awk '$1 == "data" {print $2}' | LC_ALL=C sort | head -n 6)
[ "${#blobs[@]}" -ge 3 ] || fail "too few data blobs"
for b in "${blobs[@]}"; do
  same_output "find --blob" -r "$REPO" find -s "$SNAP2" --blob "$b"
  same_output "find --blob short --show-pack-id" -r "$REPO" find -s "$SNAP3" --blob "${b:0:8}" --show-pack-id
  same_output "find --blob --json" -r "$REPO" --json find -s "$SNAP1" --blob "$b"
done
mapfile -t packs < <(r -r "$REPO" list packs | LC_ALL=C sort)
for p in "${packs[@]}"; do
  same_output "find --pack" -r "$REPO" find -s "$SNAP2" --pack "$p"
  same_output "find --pack short --json" -r "$REPO" --json find -s "$SNAP1" --pack "${p:0:8}"
done
run_ok hv -r "$REPO" find -s "$SNAP1" --blob "${blobs[0]}" --show-pack-id
log "$(wc -l <"$OUT") lines for one blob"

check "bad input: restic's exit codes"
same_output "find without pattern" -r "$REPO" find
same_output "find --blob --tree" -r "$REPO" find --blob --tree abc
same_output "find bad --oldest" -r "$REPO" find --oldest 'last tuesday' x
same_output "find unknown pack" -r "$REPO" find --pack ffffffff
expect_exit 1 hv -r "$REPO" find --pack ffffffff
assert_grep 'unable to find pack\(s\): \[ffffffff\]' "$ERR"
pass
