#!/usr/bin/env bash
# backup's restic 0.14 flags (issue 9, §2), with restic as the referee: the same flags on the
# same tree must leave out exactly the same entries (compared with `restic ls` of both
# snapshots): --exclude-caches, --exclude-if-present FILE[:HEADER], --exclude-larger-than,
# --iexclude, --iexclude-file, -x/--one-file-system (tmpfs mounts, needs root),
# --files-from-verbatim, --files-from-raw; --ignore-ctime / --ignore-inode (the same
# changed/unmodified counts as restic), --time (the same snapshot time), and -vv / --json -v
# per-item reports (the same actions for the same items as restic).
set -euo pipefail
source "$(dirname "$0")/../tools/lib.sh"
setup "$@"
need_haven
need_restic
need_python

MOUNTS=()
cleanup_mounts() {
  local i
  for ((i = ${#MOUNTS[@]} - 1; i >= 0; i--)); do umount "${MOUNTS[$i]}" 2>/dev/null || true; done
}
trap 'rc=$?; cleanup_mounts; (exit $rc); _cleanup' EXIT

RR="$W/repo-restic"
HR="$W/repo-haven"
run_ok r -r "$RR" init
run_ok hv -r "$HR" init

S="$W/src"
mkdir -p "$S"
# ---- the tree ---------------------------------------------------------------------------
mkdir -p "$S/cache/sub" "$S/fakecache" "$S/shortcache" "$S/nb/deep" "$S/hdr" "$S/hdr2" \
  "$S/CaseDir" "$S/plain/CACHEDIR.TAG.d"
printf 'Signature: 8a477f597d28d172789f06886806bc55\n# a cache\n' >"$S/cache/CACHEDIR.TAG"
echo data >"$S/cache/data"
echo x >"$S/cache/sub/x"
printf 'Signature: 0000000000000000000000000000000000000000\n' >"$S/fakecache/CACHEDIR.TAG"
echo data >"$S/fakecache/data"
: >"$S/shortcache/CACHEDIR.TAG"
echo data >"$S/shortcache/data"
mkdir -p "$S/partialcache"
printf 'Sig' >"$S/partialcache/CACHEDIR.TAG"
echo data >"$S/partialcache/data"
: >"$S/nb/.nobackup"
echo f >"$S/nb/f"
echo g >"$S/nb/deep/g"
printf 'KEEP-OUT and more\n' >"$S/hdr/.marker"
echo f >"$S/hdr/f"
printf 'something else\n' >"$S/hdr2/.marker"
echo f >"$S/hdr2/f"
head -c 10 /dev/zero >"$S/small10"
head -c 1024 /dev/zero >"$S/exact1024"
head -c 1025 /dev/zero >"$S/over1025"
head -c 3000 /dev/zero >"$S/big3000"
ln -s "$(printf 'x%.0s' $(seq 1 1500))" "$S/longlink"   # a 1500-byte symlink target
echo p >"$S/Photo.JPG"
echo p >"$S/photo.jpg"
echo n >"$S/notes.TXT"
echo i >"$S/CaseDir/Inner.Txt"
echo u >"$S/ÄRGER.txt"
echo u >"$S/ärger.txt"
echo k >"$S/keep.md"
echo c >"$S/plain/CACHEDIR.TAG.d/c"

# ls_paths: the sorted paths of a `restic ls --json` listing, one per line (a newline in a
# name is shown as \n).
ls_paths() {
  python3 -c 'import json,sys
out = []
for l in sys.stdin:
    m = json.loads(l)
    if m.get("struct_type") == "node":
        out.append(m["path"].replace("\\", "\\\\").replace("\n", "\\n"))
print("\n".join(sorted(out)))'
}
# same_ls NAME BACKUP-ARGS...: back up with the same arguments with both tools, then compare
# `restic ls latest` of both snapshots (restic reads haven's repository).
same_ls() {
  local name="$1"
  shift
  check "$name: the same entries as restic's snapshot"
  run_ok r -r "$RR" backup "$@"
  cp "$ERR" "$W/$name.restic.err"
  run_ok hv -r "$HR" backup "$@"
  cp "$ERR" "$W/$name.haven.err"
  r -r "$RR" ls --json latest | ls_paths >"$W/$name.restic.paths"
  r -r "$HR" ls --json latest | ls_paths >"$W/$name.haven.paths"
  if ! diff -u "$W/$name.restic.paths" "$W/$name.haven.paths" >"$W/$name.diff"; then
    cat "$W/$name.diff" >&2
    fail "$name: haven's snapshot differs from restic's (- restic, + haven)"
  fi
}
has() { LC_ALL=C grep -qxF -- "$2" "$W/$1.haven.paths" || fail "$1: $2 should be in the snapshot"; }
hasnt() { ! LC_ALL=C grep -qxF -- "$2" "$W/$1.haven.paths" || fail "$1: $2 should be left out"; }

# ---- 1. --exclude-caches, --exclude-if-present --------------------------------------------
same_ls caches --exclude-caches "$S"
has caches "$S/cache/CACHEDIR.TAG"
has caches "$S/cache"
hasnt caches "$S/cache/data"
hasnt caches "$S/cache/sub"
has caches "$S/fakecache/data"
has caches "$S/shortcache/data"
assert_grep 'invalid signature in exclusion tagfile ".*fakecache/CACHEDIR.TAG"' "$W/caches.haven.err"
assert_grep 'too short\) signature in exclusion tagfile ".*shortcache/CACHEDIR.TAG"' "$W/caches.haven.err"
assert_grep 'could not read signature from exclusion tagfile ".*partialcache/CACHEDIR.TAG": unexpected EOF' "$W/caches.haven.err"

same_ls ifpresent --exclude-if-present .nobackup --exclude-if-present '.marker:KEEP-OUT' "$S"
has ifpresent "$S/nb/.nobackup"
hasnt ifpresent "$S/nb/f"
hasnt ifpresent "$S/nb/deep"
has ifpresent "$S/hdr/.marker"
hasnt ifpresent "$S/hdr/f"
has ifpresent "$S/hdr2/f"

check "--exclude-if-present with an empty file name is refused (exit 1)"
expect_exit 1 hv -r "$HR" backup --exclude-if-present ':hdr' "$S"
assert_grep 'no name for exclusion tagfile' "$ERR"

# ---- 2. --exclude-larger-than -------------------------------------------------------------
same_ls larger1k --exclude-larger-than 1k "$S"
has larger1k "$S/exact1024"
hasnt larger1k "$S/over1025"
hasnt larger1k "$S/big3000"
hasnt larger1k "$S/longlink"
has larger1k "$S/cache"
same_ls larger10b --exclude-larger-than 10B "$S"
same_ls larger_targets --exclude-larger-than 2K "$S/big3000" "$S/small10"
hasnt larger_targets "$S/big3000"
has larger_targets "$S/small10"

check "a bad --exclude-larger-than is refused (exit 1), naming the value"
expect_exit 1 hv -r "$HR" backup --exclude-larger-than 12x "$S"
assert_grep 'exclude-larger-than.*12x' "$ERR"

# ---- 3. --iexclude, --iexclude-file -------------------------------------------------------
same_ls iexclude --iexclude '*.jpg' --iexclude "$S/casedir" --iexclude 'ärger.TXT' "$S"
hasnt iexclude "$S/Photo.JPG"
hasnt iexclude "$S/photo.jpg"
hasnt iexclude "$S/CaseDir"
hasnt iexclude "$S/ÄRGER.txt"
has iexclude "$S/notes.TXT"
printf '# comment\n  *.TXT  \n\n$HAVEN_BF_DIR/KEEP.MD\n' >"$W/ipatterns"
export HAVEN_BF_DIR="$S"
same_ls iexcludefile --iexclude-file "$W/ipatterns" "$S"
hasnt iexcludefile "$S/notes.TXT"
hasnt iexcludefile "$S/CaseDir/Inner.Txt"
hasnt iexcludefile "$S/keep.md"
has iexcludefile "$S/Photo.JPG"
same_ls exclude_cased --exclude '*.jpg' "$S"
has exclude_cased "$S/Photo.JPG"

# ---- 4. -x / --one-file-system ------------------------------------------------------------
if [ "$(id -u)" = 0 ] && mkdir -p "$W/fs/mnt" && mount -t tmpfs haven-bf "$W/fs/mnt" 2>/dev/null; then
  MOUNTS+=("$W/fs/mnt")
  echo top >"$W/fs/top"
  mkdir -p "$W/fs/mnt/sub" "$W/fs/mnt/inner"
  echo m >"$W/fs/mnt/file"
  echo m >"$W/fs/mnt/sub/file"
  mount -t tmpfs haven-bf-inner "$W/fs/mnt/inner"
  MOUNTS+=("$W/fs/mnt/inner")
  echo i >"$W/fs/mnt/inner/file"
  same_ls onefs -x "$W/fs"
  has onefs "$W/fs/mnt"
  has onefs "$W/fs/top"
  hasnt onefs "$W/fs/mnt/file"
  hasnt onefs "$W/fs/mnt/sub"
  same_ls onefs_long --one-file-system "$W/fs"
  # A source path on the other file system is its own reference.
  same_ls onefs_target -x "$W/fs/mnt" "$W/fs/top"
  has onefs_target "$W/fs/mnt/file"
  has onefs_target "$W/fs/mnt/inner"
  hasnt onefs_target "$W/fs/mnt/inner/file"
  same_ls crossfs "$W/fs"
  has crossfs "$W/fs/mnt/inner/file"
else
  log "NOTE: cannot mount tmpfs here (not root?): -x is not checked"
fi

# ---- 5. --files-from-verbatim, --files-from-raw -------------------------------------------
mkdir -p "$W/ff"
echo a >"$W/ff/ spaced"
echo b >"$W/ff/#hash"
echo c >"$W/ff/star*"
echo d >"$W/ff/stard"
echo e >"$W/ff/$(printf 'new\nline')"
echo f >"$W/ff/crlf"
printf '%s\n%s\n\n%s\n%s\r\n' "$W/ff/ spaced" "$W/ff/#hash" "$W/ff/star*" "$W/ff/crlf" >"$W/verbatim"
same_ls verbatim --files-from-verbatim "$W/verbatim"
has verbatim "$W/ff/ spaced"
has verbatim "$W/ff/#hash"
has verbatim "$W/ff/star*"
hasnt verbatim "$W/ff/stard"
printf '%s\0%s\0%s\0' "$W/ff/ spaced" "$W/ff/$(printf 'new\nline')" "$W/ff/star*" >"$W/raw"
same_ls raw --files-from-raw "$W/raw"
has raw "$W/ff/star*"
has raw "$W/ff/ spaced"
hasnt raw "$W/ff/stard"
run_ok r -r "$HR" snapshots --json latest
assert_grep 'new\\nline' "$OUT" "the raw list's name with a newline is a source path"

check "--files-from-raw without the final NUL, or with an empty name, is refused (exit 1)"
printf '%s\0%s' "$W/ff/crlf" "$W/ff/stard" >"$W/raw-bad"
expect_exit 1 hv -r "$HR" backup --files-from-raw "$W/raw-bad"
assert_grep 'trailing zero byte missing' "$ERR"
printf '%s\0\0' "$W/ff/crlf" >"$W/raw-empty"
expect_exit 1 hv -r "$HR" backup --files-from-raw "$W/raw-empty"
assert_grep 'empty filename' "$ERR"
check "--stdin with --files-from-raw is refused"
expect_exit 1 hv -r "$HR" backup --stdin --files-from-raw "$W/raw"

# ---- 6. --ignore-ctime, --ignore-inode ----------------------------------------------------
# files_changed / files_unmodified of a backup's JSON summary.
counts() { python3 -c 'import json,sys
for l in open(sys.argv[1]):
    l = l.strip()
    if l.startswith("{"):
        m = json.loads(l)
        if m.get("message_type") == "summary":
            print(m["files_changed"], m["files_unmodified"])' "$1"; }
mkdir -p "$W/ch"
for i in 1 2 3; do echo "file $i" >"$W/ch/f$i"; done
# same_counts NAME PREP-COMMAND FLAGS...: base backup with both tools, PREP, then a backup
# with FLAGS; haven's changed/unmodified counts must equal restic's.
same_counts() {
  local name="$1" prep="$2"
  shift 2
  check "$name: the same changed/unmodified counts as restic"
  run_ok r -r "$RR" backup "$W/ch"
  run_ok hv -r "$HR" backup "$W/ch"
  eval "$prep"
  run_ok r -r "$RR" --json backup "$@" "$W/ch"
  counts "$OUT" >"$W/$name.restic.counts"
  run_ok hv -r "$HR" --json backup "$@" "$W/ch"
  counts "$OUT" >"$W/$name.haven.counts"
  diff "$W/$name.restic.counts" "$W/$name.haven.counts" >&2 ||
    fail "$name: counts differ (restic: $(cat "$W/$name.restic.counts"), haven: $(cat "$W/$name.haven.counts"))"
  log "$name: changed unmodified = $(cat "$W/$name.haven.counts")"
}
same_counts ctime 'chmod 600 "$W/ch/f1"' --ignore-ctime
[ "$(cat "$W/ctime.haven.counts")" = "0 3" ] || fail "--ignore-ctime: a chmod'ed file must be unmodified"
same_counts ctime_off 'chmod 644 "$W/ch/f1"'
[ "$(cat "$W/ctime_off.haven.counts")" = "1 2" ] || fail "without --ignore-ctime a chmod'ed file is changed"
# a new inode with the same size and mtime (and a new ctime): --ignore-inode implies --ignore-ctime
same_counts inode 'cp -p "$W/ch/f2" "$W/ch/f2.tmp" && mv "$W/ch/f2.tmp" "$W/ch/f2"' --ignore-inode
[ "$(cat "$W/inode.haven.counts")" = "0 3" ] || fail "--ignore-inode: a copied file must be unmodified"
same_counts inode_off 'cp -p "$W/ch/f2" "$W/ch/f2.tmp" && mv "$W/ch/f2.tmp" "$W/ch/f2"' --ignore-ctime
[ "$(cat "$W/inode_off.haven.counts")" = "1 2" ] || fail "--ignore-ctime alone still compares the inode"

# ---- 7. --time ----------------------------------------------------------------------------
# snap_time REPO PATH: the time of the snapshot of PATH (restic reads both repositories).
snap_time() {
  r -r "$1" snapshots --json --path "$2" |
    python3 -c 'import json,sys; print(" ".join(s["time"] for s in json.load(sys.stdin)))'
}
n=0
for tz in UTC Europe/Berlin America/New_York; do
  check "--time in the local zone (TZ=$tz), as restic"
  n=$((n + 1))
  mkdir -p "$W/t$n"
  echo t >"$W/t$n/f"
  run_ok env TZ="$tz" restic --cache-dir "$RESTIC_CACHE_DIR" -r "$RR" backup --time "2020-07-02 03:04:05" "$W/t$n"
  run_ok env TZ="$tz" "$HAVEN" --cache-dir "$HAVEN_CACHE_DIR" -r "$HR" backup --time "2020-07-02 03:04:05" "$W/t$n"
  rt="$(TZ=$tz snap_time "$RR" "$W/t$n")"
  ht="$(TZ=$tz snap_time "$HR" "$W/t$n")"
  [ "$rt" = "$ht" ] || fail "--time (TZ=$tz): restic stored $rt, haven $ht"
  case "$ht" in 2020-07-02T03:04:05[+-Z]*) ;; *) fail "--time (TZ=$tz): haven stored $ht" ;; esac
done
check "a bad --time is refused (exit 1)"
expect_exit 1 hv -r "$HR" backup --time "2020-13-02 03:04:05" "$W/ch"
assert_grep 'error in time option' "$ERR"
expect_exit 1 hv -r "$HR" backup --time "yesterday" "$W/ch"

# ---- 8. -v / -vv per-item reports ---------------------------------------------------------
# actions FILE: "ACTION ITEM" for each item under $W/vv, sorted (text -vv or JSON -v).
actions() { python3 - "$1" "$W/vv" <<'EOF'
import json, re, sys
root = sys.argv[2]
out = []
for line in open(sys.argv[1], encoding="utf-8", errors="surrogateescape"):
    line = line.rstrip("\n").split("\r\x1b[K")[-1]
    if line.startswith("{"):
        m = json.loads(line)
        if m.get("message_type") != "verbose_status":
            continue
        act, item = m["action"], m["item"]
    else:
        m = re.match(r"^(new|unchanged|modified) +(.*?)(, saved in [0-9.]+s \(.*\))?$", line)
        if not m:
            continue
        act, item = m.group(1), m.group(2)
    if item.startswith(root):
        out.append(act + " " + item)
print("\n".join(sorted(out)))
EOF
}
mkdir -p "$W/vv/d/e"
echo 1 >"$W/vv/a"
head -c 5000 /dev/urandom >"$W/vv/d/b"
echo 3 >"$W/vv/d/e/c"
# same_actions NAME ARGS...: both tools' reports must name the same items with the same actions.
same_actions() {
  local name="$1"
  shift
  check "$name: the same per-item report as restic ($*)"
  run_ok r -r "$RR" "$@" "$W/vv"
  actions "$OUT" >"$W/$name.restic.act"
  run_ok hv -r "$HR" "$@" "$W/vv"
  cp "$OUT" "$W/$name.haven.out"
  actions "$OUT" >"$W/$name.haven.act"
  [ -s "$W/$name.haven.act" ] || { cat "$OUT" >&2; fail "$name: haven printed no per-item lines"; }
  diff -u "$W/$name.restic.act" "$W/$name.haven.act" >&2 || fail "$name: reports differ (- restic, + haven)"
}
same_actions vv_dry backup -n -vv
assert_grep "^new       $W/vv/d/b, saved in [0-9]+\.[0-9]{3}s \(4\.883 KiB added\)$" "$W/vv_dry.haven.out"
assert_grep "^new       $W/vv/d/, saved in [0-9]+\.[0-9]{3}s \(0 B added, 0 B stored, [0-9.]+ [KM]?i?B metadata\)$" "$W/vv_dry.haven.out"
run_ok r -r "$HR" snapshots --json --path "$W/vv"
[ "$(cat "$OUT")" = "[]" ] || fail "backup -n -vv wrote a snapshot"
same_actions vv_first backup -vv
echo changed >"$W/vv/d/e/c"
same_actions vv_second backup -vv
assert_grep "^unchanged $W/vv/a$" "$W/vv_second.haven.out"
assert_grep "^modified  $W/vv/d/e/c, saved in [0-9.]+s \(8 B added, 8 B stored\)$" "$W/vv_second.haven.out"
assert_grep "^modified  $W/vv/d/, saved in " "$W/vv_second.haven.out"
echo again >"$W/vv/d/e/c"
same_actions json_v --json backup -v
assert_grep '^\{"message_type":"verbose_status","action":"modified","item":"[^"]*/vv/d/e/c","duration":[0-9.e-]+,"data_size":6,"data_size_in_repo":6,"metadata_size":0,"metadata_size_in_repo":0,"total_files":0\}$' "$W/json_v.haven.out"
assert_grep '^\{"message_type":"verbose_status","action":"unchanged","item":"[^"]*/vv/a","duration":0,' "$W/json_v.haven.out"
check "without -v, no per-item lines"
run_ok hv -r "$HR" backup "$W/vv"
! grep -qE '^(new|unchanged|modified) ' "$OUT" || fail "per-item lines without -vv"
run_ok hv -r "$HR" backup -v "$W/vv"
! grep -qE '^(new|unchanged|modified) ' "$OUT" || fail "per-item lines with a single -v (restic: -vv)"

# --skip-if-unchanged (restic 0.17's flag; restic 0.14 has no referee): an unchanged tree
# writes no file at all; restic reads the repository as before; a change is saved. The
# snapshot's tree holds the source's ancestors too ($W, /tmp), whose times change when
# anything is created in them: these runs write their output into files made beforehand in
# another folder, and the pair is tried again if another process changed /tmp meanwhile.
check "--skip-if-unchanged writes nothing for the parent's tree, and saves a change"
mkdir -p "$W/skq/sk/d" "$W/skout"
echo one >"$W/skq/sk/a"
echo two >"$W/skq/sk/d/b"
: >"$W/skout/a"; : >"$W/skout/b"; : >"$W/skout/c"
skipped=""
for attempt in 1 2 3 4 5; do
  hv -r "$HR" backup --skip-if-unchanged "$W/skq/sk" >"$W/skout/a" 2>&1 || fail "backup: $(cat "$W/skout/a")"
  grep -qE '^snapshot [0-9a-f]{8} saved$' "$W/skout/a" || [ "$attempt" -gt 1 ] ||
    fail "the first backup (no parent) did not save a snapshot: $(cat "$W/skout/a")"
  before="$(cd "$HR" && find snapshots index data -type f | sort)"
  hv -r "$HR" backup --skip-if-unchanged "$W/skq/sk" >"$W/skout/b" 2>&1 || fail "backup: $(cat "$W/skout/b")"
  hv -r "$HR" --json backup --skip-if-unchanged "$W/skq/sk" >"$W/skout/c" 2>&1 || fail "backup: $(cat "$W/skout/c")"
  if grep -qx 'skipped creating snapshot' "$W/skout/b" &&
     grep -qE '"message_type":"summary",.*"snapshot_id":""\}$' "$W/skout/c"; then
    skipped=1
    break
  fi
  log "attempt $attempt: an ancestor changed between the runs; again"
done
[ -n "$skipped" ] || { cat "$W/skout/b" >&2; fail "no run of 5 skipped the unchanged tree"; }
! grep -q ' saved$' "$W/skout/b" || fail "a skipped backup said it saved a snapshot"
[ "$(cd "$HR" && find snapshots index data -type f | sort)" = "$before" ] ||
  fail "a skipped backup wrote a file"
echo three >"$W/skq/sk/d/b"
run_ok hv -r "$HR" backup --skip-if-unchanged "$W/skq/sk"
assert_grep '^snapshot [0-9a-f]{8} saved$' "$OUT"
run_ok r -r "$HR" snapshots --json --path "$W/skq/sk"
python3 - "$OUT" "$W/skq/sk/d/b" <<'PY' || fail "restic's view of the skipped and saved snapshots"
import json, sys
snaps = json.load(open(sys.argv[1]))
assert len(snaps) >= 2, snaps           # the first, maybe a retry's, and the changed tree
assert len({s["tree"] for s in snaps[-2:]}) == 2, snaps
PY

pass
