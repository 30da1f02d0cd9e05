#!/usr/bin/env bash
# Proves the test tools (tests/tools/lib.sh, compare_trees.py) with restic alone, so that a
# failing interop test points at haven and not at the tools:
#   1. make_tree builds every metadata kind; restic backup + restore round-trips it and
#      compare_trees finds the restored tree identical (except what restic itself cannot
#      keep: see restic_compare_flags and the sparse note below).
#   2. compare_trees detects an mtime change, an xattr change and a broken hard link on a
#      copy, naming each, and also every other kind of difference it claims to check.
# Does not use haven (the binary argument is accepted and ignored).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../tools/lib.sh
source "$(dirname "$0")/../tools/lib.sh"
setup "$@"
need_restic
need_python

SRC="$W/src"
check "make_tree builds the reference tree"
make_tree "$SRC"
[ "$MAKE_TREE_CHARDEV" = 1 ] && log "char device node: created" || log "char device node: not permitted here"

check "compare_trees: a tree equals itself (and the sparse source file is sparse)"
python3 "$TOOLS/compare_trees.py" --check-sparse "$SPARSE_FILE" "$SRC" "$SRC" >"$W/self.txt" \
  || { cat "$W/self.txt"; fail "compare_trees reports differences between a tree and itself"; }

check "restic init / backup / restore"
run_ok r -r "$W/repo" init
run_ok r -r "$W/repo" backup "$SRC"
assert_grep '^snapshot [0-9a-f]{8} saved' "$OUT" "restic backup did not save a snapshot"
run_ok r -r "$W/repo" check --read-data
assert_grep 'no errors were found' "$OUT" "restic check did not report 'no errors were found'"
run_ok r -r "$W/repo" restore latest --target "$W/target"
RESTORED="$W/target$SRC"

compare_trees "$SRC" "$RESTORED" "${RESTIC_CMP[@]}"

check "restic restore keeps the things compare_trees is strict about (informational details)"
python3 "$TOOLS/compare_trees.py" --check-sparse "$SPARSE_FILE" "$SRC" "$RESTORED" >"$W/sparse.txt" || true
if grep -q 'NOT sparse in B' "$W/sparse.txt"; then
  log "NOTE: restic $RESTIC_VERSION restore does not keep $SPARSE_FILE sparse (0.14 has no --sparse)"
else
  log "NOTE: restic $RESTIC_VERSION restore kept $SPARSE_FILE sparse"
fi
if [ ${#RESTIC_CMP[@]} -gt 0 ]; then
  python3 "$TOOLS/compare_trees.py" -q "$SRC" "$RESTORED" >"$W/strict.txt" || true
  log "NOTE: restic $RESTIC_VERSION cannot keep a non-UTF-8 symlink target; strict compare says:"
  sed 's/^/    /' "$W/strict.txt"
  grep -q '"link-badutf8": symlink target differs' "$W/strict.txt" \
    || fail "expected the strict comparison to flag link-badutf8 for restic < 0.16"
  [ "$(grep -c '^  DIFF' "$W/strict.txt")" = 1 ] \
    || fail "expected exactly one strict difference (link-badutf8) for restic < 0.16"
fi

# ---------------------------------------------------------------------------------------
# Negative tests: a copy of the restored tree with deliberate differences.
# expect_diffs DIR EXPECTED_COUNT PATTERN...: compare_trees SRC DIR must fail, print exactly
# EXPECTED_COUNT DIFF lines and match every PATTERN (extended regexp).
expect_diffs() {
  local dir="$1" n="$2"; shift 2
  local rc=0
    python3 "$TOOLS/compare_trees.py" "${RESTIC_CMP[@]}" "$SRC" "$dir" >"$W/neg.txt" 2>&1 || rc=$?
  sed 's/^/    /' "$W/neg.txt"
  [ "$rc" = 1 ] || fail "compare_trees exit $rc on a modified tree (wanted 1)"
  local got
  got="$(grep -c '^  DIFF' "$W/neg.txt" || true)"
  [ "$got" = "$n" ] || fail "compare_trees reported $got differences, wanted $n"
  local p
  for p in "$@"; do
    grep -Eq -- "$p" "$W/neg.txt" || fail "compare_trees output does not name: $p"
  done
}

# restore_parent_mtime DIR_IN_COPY: put back the original mtime of a directory whose
# entries we changed (so only the intended difference remains).
restore_mtime_from_src() {
  local rel="$1"
  touch -h -r "$SRC/$rel" "$MOD/$rel"
}

check "compare_trees detects a changed mtime, a changed xattr and a broken hard link"
MOD="$W/modified"
cp -a "$RESTORED" "$MOD"
compare_trees "$SRC" "$MOD" "${RESTIC_CMP[@]}"   # cp -a is faithful to begin with
touch -d '2022-01-01T00:00:00.5Z' "$MOD/mode0600"
setfattr -n user.text -v "changed value" "$MOD/xattr-file"
cp -a "$MOD/hl-pair-b" "$MOD/hl-pair-b.tmp"        # same content/mode/mtime/xattrs, new inode
mv -f "$MOD/hl-pair-b.tmp" "$MOD/hl-pair-b"
restore_mtime_from_src .
expect_diffs "$MOD" 3 \
  '"mode0600": mtime differs: A 2021-03-04T[0-9:.]+Z, B 2022-01-01T00:00:00.500000000Z' \
  '"xattr-file": xattr user.text differs' \
  '"hl-pair-a": hard-link group differs: A \{"hl-pair-a", "hl-pair-b"\}, B \{"hl-pair-a"\} \{"hl-pair-b"\}'
rm -rf "$MOD"

check "compare_trees detects every other kind of difference it claims to check"
cp -a "$RESTORED" "$MOD"
chmod u-s "$MOD/setuid-file"                                   # mode (setuid)
chmod -t "$MOD/sticky-dir"; restore_mtime_from_src sticky-dir  # mode (sticky dir)
chown 1234:5679 "$MOD/owned-1234-5678"                         # owner
python3 - "$MOD/3m-random.bin" <<'EOF'                         # content, same size and mtime
import os, sys
st = os.stat(sys.argv[1])
with open(sys.argv[1], "r+b") as f:
    f.seek(1000); b = f.read(1); f.seek(1000); f.write(bytes([b[0] ^ 1]))
os.utime(sys.argv[1], ns=(st.st_atime_ns, st.st_mtime_ns))
EOF
rm "$MOD/link-dangling"; ln -s does/not/exist2 "$MOD/link-dangling"   # symlink target
touch -h -r "$SRC/link-dangling" "$MOD/link-dangling"
touch -h -d '2020-02-02T02:02:02Z' "$MOD/link-normal"                  # symlink mtime
touch -d '2020-02-02T02:02:02Z' "$MOD/emptydir"                        # dir mtime
setfattr -x user.dirattr "$MOD/dir"; touch -h -r "$SRC/dir" "$MOD/dir" # xattr removed
setfattr -n user.extra -v 1 "$MOD/one-byte"                            # xattr added
printf 'x' >"$MOD/dir/sub/new-file"; restore_mtime_from_src dir/sub    # extra path
rm "$MOD/hl2/t3"; restore_mtime_from_src hl2                           # missing path
rm "$MOD/fifo"; printf '' >"$MOD/fifo"; touch -r "$SRC/fifo" "$MOD/fifo"   # type
restore_mtime_from_src .
patterns=(
  '"setuid-file": mode differs: A 4755, B 0755'
  '"sticky-dir": mode differs: A 1777, B 0777'
  '"owned-1234-5678": owner differs: A 1234:5678, B 1234:5679'
  '"3m-random.bin": content differs'
  '"link-dangling": symlink target differs: A "does/not/exist", B "does/not/exist2"'
  '"link-normal": mtime differs: .*\(symlink\)'
  '"emptydir": mtime differs: .*\(dir\)'
  '"dir": xattr user.dirattr differs'
  '"one-byte": xattr user.extra differs'
  '"dir/sub/new-file": extra in B'
  '"hl2/t3": missing in B'
  '"fifo": type differs: A fifo, B file'
)
n=${#patterns[@]}
if [ "$MAKE_TREE_CHARDEV" = 1 ]; then
  rm "$MOD/chardev-null"; mknod "$MOD/chardev-null" c 1 5
  touch -r "$SRC/chardev-null" "$MOD/chardev-null"; restore_mtime_from_src .
  patterns+=('"chardev-null": device number differs: A 1:3, B 1:5')
  n=$((n + 1))
fi
expect_diffs "$MOD" "$n" "${patterns[@]}"

check "compare_trees --ignore and --ignore-dir-mtime"
python3 "$TOOLS/compare_trees.py" -q --ignore-dir-mtime "${RESTIC_CMP[@]}" \
  --ignore setuid-file --ignore sticky-dir --ignore owned-1234-5678 --ignore 3m-random.bin \
  --ignore link-dangling --ignore link-normal --ignore dir --ignore one-byte --ignore hl2 \
  --ignore fifo --ignore chardev-null "$SRC" "$MOD" >"$W/ign.txt" \
  || { cat "$W/ign.txt"; fail "--ignore/--ignore-dir-mtime did not hide the differences"; }
rm -rf "$MOD"

check "compare_trees --check-sparse tells a sparse copy from a dense one"
mkdir "$W/sp-a" "$W/sp-b" "$W/sp-c"
cp --sparse=always "$SRC/$SPARSE_FILE" "$W/sp-a/f"
cp --sparse=always "$SRC/$SPARSE_FILE" "$W/sp-b/f"
cp --sparse=never "$SRC/$SPARSE_FILE" "$W/sp-c/f"
touch -r "$W/sp-a/f" "$W/sp-b/f" "$W/sp-c/f"
touch -r "$W/sp-a" "$W/sp-b" "$W/sp-c"
python3 "$TOOLS/compare_trees.py" -q --check-sparse f "$W/sp-a" "$W/sp-b" >"$W/sp1.txt" \
  || { cat "$W/sp1.txt"; fail "--check-sparse rejected a sparse copy"; }
rc=0; python3 "$TOOLS/compare_trees.py" --check-sparse f "$W/sp-a" "$W/sp-c" >"$W/sp2.txt" || rc=$?
[ "$rc" = 1 ] && grep -q '"f": .* NOT sparse in B' "$W/sp2.txt" \
  || { cat "$W/sp2.txt"; fail "--check-sparse did not flag a dense copy"; }
if grep -q '^  DIFF' "$W/sp2.txt"; then fail "dense copy: content/metadata must still compare equal"; fi

pass "tools verified with restic $RESTIC_VERSION"
