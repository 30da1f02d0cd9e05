#!/usr/bin/env bash
# The box's verbs (docs/box.md) on the reference tree with every metadata kind:
#   box create/add -> box extract is identical (strict compare_trees); box cat of one file
#   edits (add at a new path, mv, rm) are new snapshots in box log; subtrees off the edited
#     path keep their ids
#   extract keeps existing files unless --overwrite
#   box export -> restic check --read-data is clean and restic restore is identical;
#     box import of that directory gives the same listing
#   --key HEX boxes: open with the key, not with another; restic opens the export with the hex
#     string as password
#   the repository commands work on box:F (snapshots, check, forget --prune returns space,
#     key add/list, restore)
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../tools/lib.sh
source "$(dirname "$0")/../tools/lib.sh"
setup "$@"
need_restic
need_haven
need_python

SRC="$W/src"
B="$W/t.hbox"
make_tree "$SRC"

check "box create + add of the reference tree"
run_ok hv box create "$B"
[ -f "$B" ] || fail "no box file"
run_ok hv box add "$B" "$SRC"
assert_grep 'added .*snapshot [0-9a-f]{8}' "$OUT"

check "box list shows the tree under /src; --long and --json work"
run_ok hv box list "$B"
assert_grep '^/src/hello.txt$' "$OUT"
assert_grep '^/src/dir/sub/deeper/file.txt$' "$OUT"
run_ok hv box list "$B" /src/dir --long
assert_grep '^-rw-r--r-- +10 .* /src/dir/sub/deeper/file.txt$' "$OUT"
run_ok hv box list "$B" --json
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert any(e["path"]=="/src/hello.txt" and e["size"]==6 for e in d), d[:3]' "$OUT" \
  || fail "box list --json"

check "box extract of everything is identical to the source (strict)"
run_ok hv box extract "$B" --target "$W/ext"
compare_trees "$SRC" "$W/ext/src"

check "box extract of one directory and of one file"
run_ok hv box extract "$B" /src/dir/sub --target "$W/out-sub"
compare_trees "$SRC/dir/sub" "$W/out-sub/sub"
run_ok hv box extract "$B" /src/big20m.bin --target "$W/out-file"
cmp "$SRC/big20m.bin" "$W/out-file/big20m.bin" || fail "extracted file differs"
[ "$(ls -A "$W/out-file")" = big20m.bin ] || fail "extract of one file wrote more: $(ls -A "$W/out-file")"

check "box cat writes one file"
run_ok hv box cat "$B" /src/big20m.bin
cmp "$SRC/big20m.bin" "$OUT" || fail "box cat differs"
expect_exit 1 hv box cat "$B" /src/dir
expect_exit 1 hv box cat "$B" /src/missing

check "edits are new snapshots; box log lists them"
printf 'new\n' >"$W/new.txt"
run_ok hv box add "$B" "$W/new.txt" /docs/deep/new.txt
run_ok hv box mv "$B" /docs/deep/new.txt /docs/moved.txt
run_ok hv box rm "$B" /src/hello.txt
run_ok hv box log "$B"
cp "$OUT" "$W/log.txt"
[ "$(wc -l <"$W/log.txt")" = 5 ] || { cat "$W/log.txt"; fail "want 5 snapshots in the log"; }
assert_grep ' create /$' "$W/log.txt"
assert_grep ' add +/docs/deep/new.txt$' "$W/log.txt"
assert_grep ' mv +/docs/deep/new.txt -> /docs/moved.txt$' "$W/log.txt"
assert_grep ' rm +/src/hello.txt$' "$W/log.txt"
run_ok hv box list "$B"
assert_grep '^/docs/moved.txt$' "$OUT"
if grep -q '^/src/hello.txt$' "$OUT"; then fail "hello.txt still listed after rm"; fi
if grep -q '^/docs/deep/new.txt$' "$OUT"; then fail "new.txt still at its old path"; fi

check "subtrees off the edited path keep their ids (/src/dir in the first add and after rm)"
tree_of() {  # tree_of SNAPSHOT PATH...: the subtree id at PATH below the snapshot's root
  local snap="$1"; shift
  local t
  t=$(hv -r "box:$B" --no-cache cat snapshot "$snap" | python3 -c 'import json,sys; print(json.load(sys.stdin)["tree"])')
  for c in "$@"; do
    t=$(hv -r "box:$B" --no-cache cat blob "$t" | python3 -c '
import json,sys
n=[x for x in json.load(sys.stdin)["nodes"] if x["name"]==sys.argv[1]]
print(n[0]["subtree"])' "$c")
  done
  echo "$t"
}
first_add=$(awk '/ add +\/src$/ {print $1}' "$W/log.txt")
last=$(tail -n 1 "$W/log.txt" | awk '{print $1}')
[ -n "$first_add" ] && [ -n "$last" ] || fail "log ids"
a=$(tree_of "$first_add" src dir)
b=$(tree_of "$last" src dir)
[ "$a" = "$b" ] || fail "/src/dir changed its id: $a vs $b"
a=$(tree_of "$first_add" src)
b=$(tree_of "$last" src)
[ "$a" != "$b" ] || fail "/src kept its id though hello.txt was removed"

check "extract keeps existing files unless --overwrite"
printf 'changed by the user\n' >"$W/ext/src/one-byte"
run_ok hv box extract "$B" /src/one-byte --target "$W/ext/src"
[ "$(cat "$W/ext/src/one-byte")" = "changed by the user" ] || fail "existing file replaced"
assert_grep 'kept 1 existing' "$OUT"
run_ok hv box extract "$B" /src/one-byte --target "$W/ext/src" --overwrite
cmp "$SRC/one-byte" "$W/ext/src/one-byte" || fail "--overwrite did not restore the file"

check "box export: restic check --read-data is clean and restic restore is identical"
run_ok hv box export "$B" "$W/exported"
run_ok r -r "$W/exported" check --read-data
assert_grep 'no errors were found' "$OUT"
run_ok r -r "$W/exported" restore "$first_add" --target "$W/restic-out"
compare_trees "$SRC" "$W/restic-out/src" "${RESTIC_CMP[@]}"

check "box import of the exported directory lists the same"
run_ok hv box list "$B"
cp "$OUT" "$W/list-before"
run_ok hv box import "$W/exported" "$W/imported.hbox"
run_ok hv box list "$W/imported.hbox"
diff "$W/list-before" "$OUT" >/dev/null || fail "imported box lists differently"
expect_exit 1 hv box import "$W/exported" "$W/imported.hbox"

check "--key boxes: the key opens, another key and the password do not; restic opens the export"
KEY=$(python3 -c 'import os; print(os.urandom(32).hex())')
OTHER=$(python3 -c 'import os; print(os.urandom(32).hex())')
K="$W/k.hbox"
run_ok hv box create "$K" --key "$KEY"
run_ok hv box add "$K" "$SRC/dir" --key "$KEY"
HAVEN_BOX_KEY="$KEY" run_ok hv box list "$K"
assert_grep '^/dir/sub/s.txt$' "$OUT"
expect_exit 12 hv box list "$K" --key "$OTHER"
expect_exit 12 hv box list "$K"
expect_exit 1 hv box list "$K" --key abc
run_ok hv box extract "$K" --target "$W/kout" --key "$KEY"
compare_trees "$SRC/dir" "$W/kout/dir"
run_ok hv box export "$K" "$W/kexp" --key "$KEY"
RESTIC_PASSWORD="$KEY" run_ok r -r "$W/kexp" check --read-data
RESTIC_PASSWORD="$KEY" run_ok r -r "$W/kexp" restore latest --target "$W/kres"
compare_trees "$SRC/dir" "$W/kres/dir" "${RESTIC_CMP[@]}"

check "repository commands on box:F"
run_ok hv -r "box:$B" snapshots
assert_grep '5 snapshots' "$OUT"
run_ok hv -r "box:$B" check --read-data
assert_grep 'no errors were found' "$OUT"
run_ok hv -r "box:$B" restore latest --target "$W/restore-out"
[ -f "$W/restore-out/docs/moved.txt" ] || fail "restore of box:F"
printf 'second\n' >"$W/pw2"
run_ok hv -r "box:$B" key add --new-password-file "$W/pw2"
HAVEN_PASSWORD=second run_ok hv -r "box:$B" key list
size_before=$(stat -c %s "$B")
run_ok hv -r "box:$B" forget --keep-last 1 -g host --prune
# Every change has its own paths, so -g host puts them in one group. The latest snapshot still
# holds /src; after box rm /src, prune frees most of the data.
run_ok hv box rm "$B" /src
run_ok hv -r "box:$B" forget --keep-last 1 -g host --prune
run_ok hv -r "box:$B" check --read-data
size_after=$(stat -c %s "$B")
log "box file: $size_before -> $size_after bytes"
[ "$size_after" -lt $((size_before / 4)) ] || fail "prune did not return the space: $size_before -> $size_after"
[ ! -e "$B-wal" ] || fail "WAL file left next to the box"
run_ok hv box compact "$B"
run_ok hv box list "$B"
assert_grep '^/docs/moved.txt$' "$OUT"

pass "box verbs round trip"
