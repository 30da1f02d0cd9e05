#!/usr/bin/env bash
# restic 0.14's flags and output for the everyday read commands, with restic as the referee
# on the same repository:
#   A. ls: the header line byte for byte (Go's time format, in UTC and in a named zone), DIR
#      filter arguments (non-recursive unless --recursive), relative DIRs refused
#   B. dump of a directory as tar (default) and -a zip: same entries (tar tvf / unzip -l) and
#      the same extracted trees as restic's dump; "/" dumps the whole snapshot
#   C. restore --iinclude / --iexclude ignore the case of names
#   D. check --read-data-subset SIZE (50M, 1k) reads random packs; bad sizes exit 1;
#      --with-cache reads through the local cache
#   E. key add / passwd --user --host are recorded in the key file (restic lists them)
#   F. -q snapshots prints the table as restic does; -g/--group-by gives a table per group
#      with its header line (and JSON group_key)
#   G. forget --prune prints prune's statistics
#   H. generate: bash completion completes `haven ba`, man pages render without warnings,
#      zsh/fish completions are syntactically valid
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../tools/lib.sh
source "$(dirname "$0")/../tools/lib.sh"
setup "$@"
need_restic
need_haven
need_python
need_cmd tar tar

REPO="$W/repo"
SRC="$W/src"
run_ok hv -r "$REPO" init

# A small tree with what dump must carry: nested dirs, symlink, owner, setuid, xattr, a name
# longer than ustar's 100 bytes, a fifo below the top level (skipped by restic's dump).
mkdir -p "$SRC/dir1/sub/deeper" "$SRC/dir2" "$SRC/Docs"
printf 'one\n' >"$SRC/dir1/a.txt"
printf 'sub\n' >"$SRC/dir1/sub/s.txt"
printf 'deep\n' >"$SRC/dir1/sub/deeper/d.txt"
printf 'two\n' >"$SRC/dir2/b.txt"
head -c 300000 /dev/urandom >"$SRC/dir2/random.bin"
ln -s ../dir2/b.txt "$SRC/dir1/link"
printf 'suid\n' >"$SRC/dir1/suid"; chmod 4755 "$SRC/dir1/suid"
long="$(printf 'n%.0s' $(seq 1 120))"
printf 'long\n' >"$SRC/dir1/sub/$long"
mkfifo "$SRC/dir1/sub/fifo"
printf 'owned\n' >"$SRC/dir2/owned"
chown 1234:5678 "$SRC/dir2/owned" 2>/dev/null || true
if command -v setfattr >/dev/null 2>&1; then setfattr -n user.note -v "hello xattr" "$SRC/dir2/b.txt" || true; fi
printf 'F\n' >"$SRC/Docs/Foo.TXT"
printf 'b\n' >"$SRC/Docs/bar.txt"
printf 'z\n' >"$SRC/Docs/Baz.JPG"
touch -d '2021-03-04T05:06:07.6Z' "$SRC/dir1/a.txt"

run_ok hv -r "$REPO" backup --host alpha "$SRC"
S1=$(tail -n 5 "$OUT" | grep -oE 'snapshot [0-9a-f]{8} saved' | awk '{print $2}')
[ -n "$S1" ] || fail "no snapshot id in backup output"
TZ=Europe/Berlin run_ok hv -r "$REPO" backup --host beta --tag t1 "$SRC/dir2"
S2=$(grep -oE 'snapshot [0-9a-f]{8} saved' "$OUT" | awk '{print $2}')

# ---- A. ls ------------------------------------------------------------------------------
check "A: ls output equals restic's byte for byte (header, filters, --recursive, -l)"
same_ls() {
  run_ok hv -r "$REPO" ls "$@"; cp "$OUT" "$W/ls.h"
  run_ok r -r "$REPO" ls "$@"; cp "$OUT" "$W/ls.r"
  cmp -s "$W/ls.h" "$W/ls.r" || { diff "$W/ls.r" "$W/ls.h" | head -20 >&2; fail "ls $* differs from restic's"; }
}
same_ls "$S1"
assert_grep "^snapshot $S1 of \[$SRC\] filtered by \[\] at [0-9-]{10} [0-9:.]+ \+0000 UTC\):$" "$W/ls.h" "A: header"
same_ls "$S1" "$SRC/dir1"
assert_grep "^snapshot $S1 of \[$SRC\] filtered by \[$SRC/dir1\] at " "$W/ls.h"
grep -q "/sub/s.txt" "$W/ls.h" && fail "A: ls DIR is not recursive without --recursive"
same_ls "$S1" "$SRC/dir1" "$SRC/dir2/"
same_ls --recursive "$S1" "$SRC/dir1"
grep -q "/sub/deeper/d.txt" "$W/ls.h" || fail "A: ls --recursive DIR lists everything below DIR"
same_ls -l "$S1" "$SRC/dir1/sub"
same_ls "$S1" /does/not/exist
# a snapshot taken with a +01:00 offset, listed in UTC and in that zone
same_ls "$S2"
assert_grep " \+0100 \+0100\):$" "$W/ls.h" "A: a foreign offset prints as a numeric zone"
TZ=Europe/Berlin same_ls "$S2"
assert_grep " \+0100 CET\):$" "$W/ls.h" "A: the local zone prints its abbreviation"
expect_exit 1 hv -r "$REPO" ls "$S1" dir1
assert_grep "must be absolute" "$ERR"

# ---- B. dump ----------------------------------------------------------------------------
check "B: dump DIR as tar and zip: same entries and trees as restic's dump"
dump_pair() {  # dump_pair NAME ARGS...: haven's and restic's dump into $W/NAME.{h,r}
  local name="$1"; shift
  timeout 300 "$HAVEN" --cache-dir "$HAVEN_CACHE_DIR" -r "$REPO" dump "$@" >"$W/$name.h" 2>"$W/err" \
    || { cat "$W/err" >&2; fail "haven dump $* failed"; }
  r -r "$REPO" dump "$@" >"$W/$name.r" 2>"$W/err" || { cat "$W/err" >&2; fail "restic dump $* failed"; }
}
tree_of() {  # tree_of ARCHIVE DIR FORMAT: extract, keeping modes, owners and xattrs
  rm -rf "$2"; mkdir -p "$2"
  if [ "$3" = zip ]; then (cd "$2" && unzip -q "$1"); else tar --xattrs --xattrs-include='*' -xpf "$1" -C "$2"; fi
}
snapshot_tree() {  # a listing of DIR: type, mode, owner, size, mtime (s), link, xattrs
  (cd "$1" && find . -mindepth 1 -printf '%y %m %U:%G %s %TY-%Tm-%Td %TH:%TM:%.2TS %p -> %l\n' | LC_ALL=C sort)
  (cd "$1" && getfattr -R -d -m - . 2>/dev/null | grep -v '^#' | LC_ALL=C sort) || true
}
for target in "$SRC/dir1" "$SRC" /; do
  dump_pair tar "$S1" "$target"
  tar tvf "$W/tar.h" >"$W/tvf.h" || fail "B: tar cannot read haven's dump of $target"
  tar tvf "$W/tar.r" >"$W/tvf.r"
  LC_ALL=C sort "$W/tvf.h" >"$W/tvf.hs"; LC_ALL=C sort "$W/tvf.r" >"$W/tvf.rs"
  diff "$W/tvf.rs" "$W/tvf.hs" >&2 || fail "B: tar tvf of haven's dump of $target differs from restic's"
  tree_of "$W/tar.h" "$W/xh" tar; tree_of "$W/tar.r" "$W/xr" tar
  diff -r --no-dereference "$W/xr" "$W/xh" >&2 || fail "B: extracted tar contents differ ($target)"
  # (the parents of the dumped directory are not entries: tar creates them at extraction)
  sub="${target#/}"
  diff <(snapshot_tree "$W/xr/$sub") <(snapshot_tree "$W/xh/$sub") >&2 || fail "B: extracted tar metadata differs ($target)"
done
grep -q "dir1/sub/$long" "$W/tvf.h" || fail "B: the long name is in the tar"
grep -q "fifo" "$W/tvf.h" && fail "B: a fifo below the top level is not dumped (restic skips it)"
dump_pair zip "$S1" "$SRC/dir1" -a zip
unzip -l "$W/zip.h" | awk 'NR>3 && $4 != "" {print $1, $4}' | LC_ALL=C sort >"$W/unzip.h" || fail "B: unzip cannot read haven's zip"
unzip -l "$W/zip.r" | awk 'NR>3 && $4 != "" {print $1, $4}' | LC_ALL=C sort >"$W/unzip.r"
diff "$W/unzip.r" "$W/unzip.h" >&2 || fail "B: unzip -l of haven's zip differs from restic's"
tree_of "$W/zip.h" "$W/zh" zip; tree_of "$W/zip.r" "$W/zr" zip
diff -r --no-dereference "$W/zr" "$W/zh" >&2 || fail "B: extracted zip contents differ"
diff <(cd "$W/zr" && find . -printf '%y %m %s %p -> %l\n' | LC_ALL=C sort) \
     <(cd "$W/zh" && find . -printf '%y %m %s %p -> %l\n' | LC_ALL=C sort) >&2 \
  || fail "B: extracted zip modes/types differ"
expect_exit 1 hv -r "$REPO" dump -a rar "$S1" "$SRC/dir1"
assert_grep 'unknown archive format "rar"' "$ERR"
run_ok hv -r "$REPO" dump "$S1" "$SRC/dir1/a.txt"
[ "$(cat "$OUT")" = one ] || fail "B: dump of a file prints its content"

# ---- C. restore --iinclude / --iexclude ----------------------------------------------------
check "C: restore --iinclude / --iexclude ignore case, as restic's"
restored() { (cd "$1" && find . -type f | LC_ALL=C sort); }
run_ok hv -r "$REPO" restore "$S1" --target "$W/ri.h" --iinclude '*.txt'
run_ok r -r "$REPO" restore "$S1" --target "$W/ri.r" --iinclude '*.txt'
diff <(restored "$W/ri.r") <(restored "$W/ri.h") >&2 || fail "C: --iinclude restored other files than restic"
restored "$W/ri.h" | grep -q 'Docs/Foo.TXT$' || fail "C: --iinclude '*.txt' restores Foo.TXT"
restored "$W/ri.h" | grep -q 'Baz.JPG$' && fail "C: --iinclude '*.txt' leaves Baz.JPG out"
run_ok hv -r "$REPO" restore "$S1" --target "$W/re.h" --iexclude '*.TXT' --iexclude 'DIR2'
run_ok r -r "$REPO" restore "$S1" --target "$W/re.r" --iexclude '*.TXT' --iexclude 'DIR2'
diff <(restored "$W/re.r") <(restored "$W/re.h") >&2 || fail "C: --iexclude restored other files than restic"
restored "$W/re.h" | grep -qi '\.txt$' && fail "C: --iexclude '*.TXT' leaves every .txt out"

# ---- D. check ------------------------------------------------------------------------------
check "D: check --read-data-subset SIZE and --with-cache"
run_ok hv -r "$REPO" check --read-data-subset 50M
assert_grep '^read [0-9]+ bytes of data packs$' "$OUT" "D: size subset announced as restic does"
assert_grep 'no errors were found' "$OUT"
run_ok hv -r "$REPO" check --read-data-subset 1k
for bad in 0 0M 50 x1M -5M; do
  expect_exit 1 hv -r "$REPO" check --read-data-subset "$bad"
  assert_grep 'read-data-subset' "$ERR" "D: a bad subset '$bad' names the flag"
done
rm -rf "$W/cc"; mkdir -p "$W/cc"
run_ok "$HAVEN" --cache-dir "$W/cc" -r "$REPO" check
[ -z "$(find "$W/cc" -type f -path '*/snapshots/*')" ] || fail "D: check without --with-cache does not use the cache"
run_ok "$HAVEN" --cache-dir "$W/cc" -r "$REPO" check --with-cache
[ -n "$(find "$W/cc" -type f -path '*/snapshots/*')" ] || fail "D: check --with-cache reads through the cache"
assert_grep 'no errors were found' "$OUT"

# ---- E. key --user --host -----------------------------------------------------------------
check "E: key add / passwd --user --host are recorded (restic's key list shows them)"
printf 'pw-two\n' >"$W/pw2"
run_ok hv -r "$REPO" key add --new-password-file "$W/pw2" --user alice --host box1
run_ok r -r "$REPO" key list
assert_grep '^ [0-9a-f]{8}  alice +box1 ' "$OUT" "E: restic lists the new key with user alice on box1"
printf 'pw-three\n' >"$W/pw3"
run_ok hv -r "$REPO" --password-file "$W/pw2" key passwd --new-password-file "$W/pw3" --user bob --host box2
run_ok hv -r "$REPO" --password-file "$W/pw3" key list
assert_grep '^\*[0-9a-f]{8} +bob +box2 ' "$OUT" "E: passwd records --user/--host on the new key"
grep -q alice "$OUT" && fail "E: passwd removed the old key"
run_ok r -r "$REPO" --password-file "$W/pw3" snapshots

# ---- F. snapshots -q, -g ----------------------------------------------------------------
check "F: -q snapshots prints the table as restic; -g groups with a header line"
run_ok hv -q -r "$REPO" snapshots; cp "$OUT" "$W/q.h"
run_ok r -q -r "$REPO" snapshots; cp "$OUT" "$W/q.r"
[ -s "$W/q.r" ] || fail "F: restic -q snapshots printed nothing (referee changed?)"
cmp -s "$W/q.r" "$W/q.h" || { diff "$W/q.r" "$W/q.h" >&2; fail "F: -q snapshots differs from restic's"; }
# groups: restic prints them in random (Go map) order, so compare them as sets
# (a group's block ends with its "N snapshots" line; the empty key has no header line)
groups() { python3 -c 'import re,sys
blocks=re.findall(r"(?:.*\n)*?[0-9]+ snapshots\n", sys.stdin.read())
print("=====\n".join(sorted(blocks)))'; }
for g in host paths tags host,paths host,tags,paths; do
  run_ok hv -r "$REPO" snapshots -g "$g"; groups <"$OUT" >"$W/g.h"
  run_ok r -r "$REPO" snapshots -g "$g"; groups <"$OUT" >"$W/g.r"
  cmp -s "$W/g.r" "$W/g.h" || { diff "$W/g.r" "$W/g.h" >&2; fail "F: snapshots -g $g differs from restic's"; }
done
run_ok hv -r "$REPO" snapshots --group-by host
assert_grep '^snapshots for \(host \[alpha\]\):$' "$OUT"
assert_grep '^snapshots for \(host \[beta\]\):$' "$OUT"
# (program_version: a field restic 0.14 does not know and so does not print)
json_groups() { python3 -c 'import json,sys
g=json.load(sys.stdin)
for x in g:
    for sn in x["snapshots"]: sn.pop("program_version", None)
print(json.dumps(sorted(g, key=lambda x: json.dumps(x["group_key"], sort_keys=True)), sort_keys=True))'; }
run_ok hv --json -r "$REPO" snapshots -g host,tags; json_groups <"$OUT" >"$W/j.h"
run_ok r --json -r "$REPO" snapshots -g host,tags; json_groups <"$OUT" >"$W/j.r"
cmp -s "$W/j.r" "$W/j.h" || { diff "$W/j.r" "$W/j.h" >&2; fail "F: snapshots --json -g differs from restic's"; }
expect_exit 1 hv -r "$REPO" snapshots -g hostname
assert_grep "unknown grouping option: 'hostname'" "$ERR"

# ---- G. forget --prune --------------------------------------------------------------------
check "G: forget --prune prints prune's statistics"
printf changed >"$SRC/dir2/b.txt"
run_ok hv -r "$REPO" backup --host alpha "$SRC"
run_ok hv -r "$REPO" forget --keep-last 1 --prune
assert_grep 'snapshots have been removed, running prune' "$OUT"
for label in 'to repack:' 'this removes:' 'to delete:' 'total prune:' 'remaining:' 'unused size after prune:'; do
  assert_grep "^$label" "$OUT" "G: forget --prune prints '$label' as prune does"
done
run_ok r -r "$REPO" check

# ---- H. generate --------------------------------------------------------------------------
check "H: generate completions and man pages from the command definitions"
expect_exit 1 hv generate
assert_grep 'nothing to do' "$ERR"
run_ok hv generate --bash-completion "$W/haven.bash" --zsh-completion "$W/_haven" \
  --fish-completion "$W/haven.fish" --man "$W/man"
out=$(bash -c 'set -e; source "$1"; COMP_WORDS=(haven ba); COMP_CWORD=1; _haven; echo "${COMPREPLY[*]}"' _ "$W/haven.bash") \
  || fail "H: the bash completion does not source"
[ "$out" = backup ] || fail "H: 'haven ba' completes to '$out', not backup"
out=$(bash -c 'source "$1"; COMP_WORDS=(haven -r /x key a); COMP_CWORD=4; _haven; echo "${COMPREPLY[*]}"' _ "$W/haven.bash")
[ "$out" = add ] || fail "H: 'haven -r /x key a' completes to '$out', not add"
out=$(bash -c 'source "$1"; COMP_WORDS=(haven ls --recu); COMP_CWORD=2; _haven; echo "${COMPREPLY[*]}"' _ "$W/haven.bash")
[ "$out" = --recursive ] || fail "H: 'haven ls --recu' completes to '$out'"
need_cmd groff groff-base
for cmd in "" backup ls dump restore check key-add snapshots forget prune generate; do
  page="$W/man/haven${cmd:+-$cmd}.1"
  [ -s "$page" ] || fail "H: man page $page missing"
  warn=$(groff -man -Tutf8 -ww -z "$page" 2>&1) || fail "H: groff fails on $page"
  [ -z "$warn" ] || fail "H: groff warns on $page: $warn"
done
groff -man -Tutf8 -P-cbou "$W/man/haven-ls.1" 2>/dev/null | grep -q -- "--recursive" || fail "H: haven-ls.1 lists --recursive"
# every visible command has a page
for c in init backup snapshots ls restore dump cat check key unlock forget prune repair version; do
  [ -s "$W/man/haven-$c.1" ] || fail "H: no man page for $c"
done
[ -s "$W/_haven" ] && [ -s "$W/haven.fish" ] || fail "H: empty zsh/fish completion"
grep -q "'backup:" "$W/_haven" || fail "H: zsh completion lacks backup"
if command -v zsh >/dev/null 2>&1 || { _apt_install zsh; command -v zsh >/dev/null 2>&1; }; then
  zsh -n "$W/_haven" || fail "H: zsh -n rejects the zsh completion"
else
  log "NOTE: zsh not installable; zsh completion not syntax-checked"
fi
if command -v fish >/dev/null 2>&1 || { _apt_install fish; command -v fish >/dev/null 2>&1; }; then
  fish -n "$W/haven.fish" || fail "H: fish -n rejects the fish completion"
  out=$(HOME="$W" fish -c "source $W/haven.fish; complete -C 'haven ba'" | cut -f1)
  [ "$out" = backup ] || fail "H: fish completes 'haven ba' to '$out'"
else
  log "NOTE: fish not installable; fish completion not syntax-checked"
fi

# ---------------------------------------------------------------------------------------
check "I. check --check-unused is accepted and ignored, as restic 0.14 does"
U="$W/unused"
mkdir -p "$W/u-src"
gen_bytes 71 3000000 >"$W/u-src/one.bin"
run_ok hv -r "$U" init --scrypt 1024,8,1
run_ok hv -r "$U" backup "$W/u-src"
gen_bytes 72 2000000 >"$W/u-src/one.bin"
run_ok hv -r "$U" backup "$W/u-src"
run_ok hv -r "$U" snapshots --json
first=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[0]["id"])' "$OUT")
run_ok hv -r "$U" forget "$first"
run_ok r -r "$U" check --check-unused      # the referee: unused data is no error
run_ok hv -r "$U" check --check-unused
assert_grep "deprecated and will be ignored" "$ERR" "I: no deprecation notice"

pass "ls, dump, restore, check, key, snapshots, forget --prune and generate behave as restic's"
