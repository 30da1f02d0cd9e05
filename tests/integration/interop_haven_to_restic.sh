#!/usr/bin/env bash
# haven writes, restic reads:
#   haven init + haven backup of make_tree
#   -> restic check --read-data: exit 0, "no errors were found"
#   -> restic restore: identical to the source by compare_trees (restic < 0.16 cannot restore
#      a non-UTF-8 symlink target exactly: see restic_compare_flags)
#   -> restic ls latest and haven ls latest print the same paths
#   -> restic snapshots --json and haven snapshots --json agree on id, tree, paths
#   -> haven restore of its own backup is exact (strict compare, no restic leniency)
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../tools/lib.sh
source "$(dirname "$0")/../tools/lib.sh"
setup "$@"
need_restic
need_haven
need_python

SRC="$W/src"
REPO="$W/repo"
make_tree "$SRC"

check "haven init"
run_ok hv -r "$REPO" init
[ -f "$REPO/config" ] || fail "haven init wrote no config file"

check "haven backup of the reference tree (exit 0)"
run_ok hv -r "$REPO" backup "$SRC"

check "restic check --read-data on the haven repository"
run_ok r -r "$REPO" check --read-data
assert_grep 'no errors were found' "$OUT" "restic check did not say 'no errors were found'"

check "restic snapshots --json lists haven's snapshot with the right path"
run_ok r -r "$REPO" snapshots --json
cp "$OUT" "$W/restic-snaps.json"
python3 - "$W/restic-snaps.json" "$SRC" <<'EOF' || fail "restic's view of haven's snapshot is wrong"
import json, sys
s = json.load(open(sys.argv[1]))
assert len(s) == 1, "expected 1 snapshot, restic sees %d" % len(s)
assert s[0]["paths"] == [sys.argv[2]], "paths %r" % s[0]["paths"]
assert len(s[0]["tree"]) == 64, "tree %r" % s[0]["tree"]
EOF

check "haven snapshots --json agrees with restic on id, tree, paths, hostname, time"
run_ok hv -r "$REPO" snapshots --json
cp "$OUT" "$W/haven-snaps.json"
python3 "$TOOLS/compare_snapshots_json.py" "$W/restic-snaps.json" "$W/haven-snaps.json" \
  || fail "snapshots --json differ"

check "restic restore of haven's snapshot is identical to the source"
run_ok r -r "$REPO" restore latest --target "$W/restic-target"
compare_trees "$SRC" "$W/restic-target$SRC" "${RESTIC_CMP[@]}"

check "restic ls latest and haven ls latest list the same paths"
run_ok r -r "$REPO" ls latest
sorted_ls_paths "$OUT" >"$W/restic-ls.txt"
run_ok hv -r "$REPO" ls latest
sorted_ls_paths "$OUT" >"$W/haven-ls.txt"
[ "$(wc -l <"$W/restic-ls.txt")" -gt 50 ] || fail "restic ls printed too few paths"
diff -u "$W/restic-ls.txt" "$W/haven-ls.txt" >"$W/ls.diff" \
  || { cat -v "$W/ls.diff" | head -40; fail "restic ls and haven ls differ"; }

check "haven restore of its own snapshot is exact (strict)"
run_ok hv -r "$REPO" restore latest --target "$W/haven-target"
compare_trees "$SRC" "$W/haven-target$SRC"

check "no lock files left behind"
[ -z "$(ls -A "$REPO/locks")" ] || fail "locks/ not empty: $(ls "$REPO/locks")"

pass "restic $RESTIC_VERSION reads haven's repository"
