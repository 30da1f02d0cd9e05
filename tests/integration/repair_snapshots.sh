#!/usr/bin/env bash
# repair snapshots (restic 0.16 semantics), read back by restic:
#   three haven backups S1 (a/, top.txt, big.bin), S2 (+ c/), S3 (top.txt replaced);
#   S2's tree pack and S3's data pack deleted, index rebuilt. Then
#   --dry-run changes nothing; without --forget S2 (root unreadable) is removed and S3
#   gets a repaired copy tagged "repaired" with original = S3 (S3 kept): c/ is an empty
#   dir, top.txt has no content and size 0, the rest restores identical (restic restore);
#   with --forget S3 is replaced and haven check and restic check --read-data are clean.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../tools/lib.sh
source "$(dirname "$0")/../tools/lib.sh"
setup "$@"
need_restic
need_haven
need_python

SRC="$W/src"
mkdir -p "$SRC/a"
for i in 1 2 3 4 5; do echo "file $i" >"$SRC/a/$i.txt"; done
echo v1 >"$SRC/top.txt"
gen_bytes 1 2000000 >"$SRC/big.bin"
R="$W/repo"
run_ok hv -r "$R" init
packs() { (cd "$R/data" && find . -type f -printf '%P\n' | sort); }
run_ok hv -r "$R" backup "$SRC"; packs >"$W/p1"
mkdir -p "$SRC/c"; echo x >"$SRC/c/x.txt"; echo y >"$SRC/c/y.txt"
run_ok hv -r "$R" backup "$SRC"; packs >"$W/p2"
gen_bytes 3 500000 >"$SRC/top.txt"
run_ok hv -r "$R" backup "$SRC"; packs >"$W/p3"
run_ok hv -r "$R" snapshots --json
read -r S1 S2 S3 < <(python3 -c 'import json,sys; print(" ".join(s["id"] for s in json.load(open(sys.argv[1]))))' "$OUT")
# pack types from restic's view of the index
run_ok r -r "$R" list index
for i in $(cat "$OUT"); do r -r "$R" cat index "$i"; echo; done >"$W/index.json"
python3 - "$W/index.json" >"$W/packtypes" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    line = line.strip()
    if not line: continue
    for p in json.loads(line)["packs"]:
        print(p["id"], p["blobs"][0]["type"])
PY
pick() { # pick LISTBEFORE LISTAFTER TYPE
  comm -13 "$1" "$2" | while read -r p; do
    if grep -q "^$(basename "$p") $3\$" "$W/packtypes"; then echo "$p"; fi
  done | head -n 1
}
TREE2="$(pick "$W/p1" "$W/p2" tree)"; DATA3="$(pick "$W/p2" "$W/p3" data)"
[ -n "$TREE2" ] && [ -n "$DATA3" ] || fail "could not find S2's tree pack and S3's data pack"
rm "$R/data/$TREE2" "$R/data/$DATA3"
run_ok hv -r "$R" repair index
expect_exit 1 hv -r "$R" check

check "dry run changes nothing"
listing() { (cd "$1" && find . -type f ! -path './locks/*' -print0 | LC_ALL=C sort -z | xargs -0 sha256sum); }
listing "$R" >"$W/l1"
run_ok hv -r "$R" -v repair snapshots --dry-run
assert_grep 'would delete empty snapshot' "$OUT" "dry run: S2 not reported"
assert_grep 'would modify 2 snapshots' "$OUT" "dry run: wrong count"
listing "$R" >"$W/l2"
cmp -s "$W/l1" "$W/l2" || fail "--dry-run changed the repository"

check "repair without --forget: repaired copy tagged, original kept"
RA="$W/ra"; cp -a "$R" "$RA"
run_ok hv -r "$RA" -v repair snapshots
assert_grep 'dir "/.*/c": replaced with empty directory' "$OUT" "c/ not replaced"
assert_grep 'file "/.*/top\.txt": removed missing content' "$OUT" "top.txt not repaired"
run_ok r -r "$RA" snapshots --json
python3 - "$OUT" "$S1" "$S2" "$S3" <<'PY'
import json, sys
snaps = json.load(open(sys.argv[1])); s1, s2, s3 = sys.argv[2:5]
ids = [s["id"] for s in snaps]
assert s1 in ids and s3 in ids and s2 not in ids, ids
new = [s for s in snaps if s["id"] not in (s1, s3)]
assert len(new) == 1, snaps
assert new[0].get("tags") == ["repaired"], new[0]
assert new[0].get("original") == s3, new[0]
PY
NEW="$(python3 -c 'import json,sys; print([s["id"] for s in json.load(open(sys.argv[1])) if s.get("tags")][0])' "$OUT")"
run_ok r -r "$RA" restore "$NEW" --target "$W/rest"
T="$W/rest$SRC"
[ -d "$T/c" ] && [ -z "$(ls -A "$T/c")" ] || fail "c/ is not an empty directory"
[ -f "$T/top.txt" ] && [ ! -s "$T/top.txt" ] || fail "top.txt is not an empty file"
cmp "$T/big.bin" "$SRC/big.bin" || fail "big.bin differs"
for i in 1 2 3 4 5; do cmp "$T/a/$i.txt" "$SRC/a/$i.txt" || fail "a/$i.txt differs"; done

check "repair --forget: repository checks clean"
RB="$W/rb"; cp -a "$R" "$RB"
run_ok hv -r "$RB" repair snapshots --forget
run_ok hv -r "$RB" check
run_ok r -r "$RB" check --read-data
run_ok r -r "$RB" snapshots --json
python3 - "$OUT" "$S1" <<'PY'
import json, sys
snaps = json.load(open(sys.argv[1]))
assert len(snaps) == 2 and snaps[0]["id"] == sys.argv[2], snaps
assert not snaps[1].get("tags") and snaps[1].get("original"), snaps[1]
PY
run_ok hv -r "$RB" repair snapshots
assert_grep 'no snapshots were modified' "$OUT" "second repair changed something"

pass
