# shellcheck shell=bash
# Helpers sourced by tests/integration/*.sh. Not a test itself (it lives in tests/tools/ so the
# CTest glob tests/integration/*.sh does not pick it up).
#
# Usage inside a test:
#   source "$(dirname "$0")/../tools/lib.sh"
#   setup "$@"            # $1 = path of the haven binary
#   need_restic
#   make_tree "$W/src"
#   compare_trees "$W/src" "$W/target/$W/src"
#
# Variables set by setup: W (work dir), HAVEN (absolute path of the haven binary),
# TOOLS (this directory), RESTIC_PASSWORD/HAVEN_PASSWORD, RESTIC_CACHE_DIR, HAVEN_CACHE_DIR.
# Tests run as root on CI; helpers that need root say so.

TOOLS="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export TOOLS

TEST_NAME="$(basename "${0%.sh}")"
BG_PIDS=()       # background processes a test started (see bg_track); killed on exit
STOPPED_PIDS=()  # processes a test SIGSTOPped; SIGCONTed on exit before they are killed

log() { printf '[%s %3ds] %s\n' "$TEST_NAME" "$SECONDS" "$*"; }
check() { printf '[%s %3ds] CHECK: %s\n' "$TEST_NAME" "$SECONDS" "$*"; }

fail() {
  printf '[%s] FAIL: %s\n' "$TEST_NAME" "$*" >&2
  exit 1
}

pass() {
  printf '[%s] PASS%s\n' "$TEST_NAME" "${1:+: $1}"
  exit 0
}

# kill_tree PID [SIGNAL]: signal PID and all its descendants (children first found, by pid).
kill_tree() {
  local pid="$1" sig="${2:-TERM}" c
  for c in $(ps -o pid= --ppid "$pid" 2>/dev/null); do kill_tree "$c" "$sig"; done
  kill "-$sig" "$pid" 2>/dev/null || true
}

# is_our_child PID: PID is still a child of this test's shell (not finished and reused).
is_our_child() { [ "$(ps -o ppid= -p "$1" 2>/dev/null | tr -d ' ')" = "$$" ]; }

_cleanup() {
  local rc=$?
  local p
  for p in "${STOPPED_PIDS[@]+"${STOPPED_PIDS[@]}"}"; do
    if is_our_child "$p"; then kill -CONT "$p" 2>/dev/null || true; fi
  done
  for p in "${BG_PIDS[@]+"${BG_PIDS[@]}"}"; do
    if is_our_child "$p"; then kill_tree "$p" TERM; fi
  done
  for p in "${BG_PIDS[@]+"${BG_PIDS[@]}"}"; do wait "$p" 2>/dev/null || true; done
  if [ "${KEEP_WORKDIR:-0}" = 1 ] || { [ $rc -ne 0 ] && [ "${KEEP_WORKDIR_ON_FAIL:-0}" = 1 ]; }; then
    echo "[$TEST_NAME] work dir kept: $W" >&2
  elif [ -n "${W:-}" ] && [ -d "$W" ]; then
    chmod -R u+rwX "$W" 2>/dev/null || true
    rm -rf "$W"
  fi
  if [ $rc -ne 0 ]; then echo "[$TEST_NAME] FAILED (exit $rc)" >&2; fi
  return $rc
}

bg_track() { BG_PIDS+=("$1"); }

# setup HAVEN_BINARY
setup() {
  if [ $# -lt 1 ] || [ -z "$1" ]; then fail "usage: $0 /path/to/haven"; fi
  HAVEN="$1"
  case "$HAVEN" in /*) ;; *) HAVEN="$(pwd)/$HAVEN" ;; esac
  export HAVEN
  W="$(mktemp -d "${TMPDIR:-/tmp}/haven-it-${TEST_NAME}.XXXXXX")"
  export W
  trap _cleanup EXIT
  trap 'exit 130' INT TERM
  export TZ="${TEST_TZ:-UTC}"
  export LC_ALL=C.UTF-8
  export RESTIC_PASSWORD="haven-test-password"
  export HAVEN_PASSWORD="$RESTIC_PASSWORD"
  unset RESTIC_PASSWORD_FILE RESTIC_PASSWORD_COMMAND HAVEN_PASSWORD_FILE HAVEN_PASSWORD_COMMAND
  unset RESTIC_REPOSITORY RESTIC_REPOSITORY_FILE HAVEN_REPOSITORY HAVEN_REPOSITORY_FILE
  unset RESTIC_KEY_HINT HAVEN_KEY_HINT
  unset RESTIC_COMPRESSION RESTIC_PACK_SIZE
  export RESTIC_CACHE_DIR="$W/cache-restic"
  export HAVEN_CACHE_DIR="$W/cache-haven"
  export XDG_CACHE_HOME="$W/xdg-cache"   # any default cache location lands in $W too
  export RESTIC_PROGRESS_FPS=0.2
  mkdir -p "$RESTIC_CACHE_DIR" "$HAVEN_CACHE_DIR" "$XDG_CACHE_HOME"
  log "work dir $W, haven=$HAVEN, TZ=$TZ"
}

# need_haven: the binary must exist and be executable (tests that use haven call this).
need_haven() {
  [ -x "$HAVEN" ] || fail "haven binary '$HAVEN' does not exist or is not executable"
}

_apt_install() {
  # _apt_install PACKAGE...: install, running apt-get update first if the install fails.
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null 2>&1 \
    || { apt-get update -qq >/dev/null 2>&1 || true
         DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null 2>&1; } \
    || true
}

# sanitizer_build [a|t]: $HAVEN is an AddressSanitizer (a), ThreadSanitizer (t) or either
# (no argument) build of make asan / make tsan.
# (Not `ldd | grep -q`: under pipefail, grep's early exit can fail the pipeline by SIGPIPE.)
sanitizer_build() {
  local libs re="lib(${1:-a|t})san\\.so"
  libs=$(ldd "$HAVEN" 2>/dev/null || true)
  [[ $libs =~ $re ]]
}

# rss_bound_applies WHAT: true unless $HAVEN is a sanitizer build (make asan / make tsan),
# where shadow memory multiplies the peak RSS and a bound means nothing; then it logs that
# WHAT is not checked in this build (the plain build of `make test` checks it).
rss_bound_applies() {
  if sanitizer_build; then
    log "not checked in this sanitizer build (shadow memory): $1"
    return 1
  fi
}

# need_cmd CMD PACKAGE: install PACKAGE if CMD is missing; fail if it is still missing.
need_cmd() {
  command -v "$1" >/dev/null 2>&1 && return 0
  log "installing $2 (for $1)"
  _apt_install "$2"
  command -v "$1" >/dev/null 2>&1 || fail "required command '$1' (package $2) is missing and could not be installed"
}

need_restic() {
  need_cmd restic restic
  RESTIC_VERSION="$(restic version | awk '{print $2}')"
  export RESTIC_VERSION
  log "using $(restic version)"
  # compare_trees flags for trees that went through restic (see restic_compare_flags)
  # shellcheck disable=SC2034  # used by the tests that source this file
  read -r -a RESTIC_CMP <<<"$(restic_compare_flags)"
}

need_python() {
  command -v python3 >/dev/null 2>&1 || need_cmd python3 python3
}

# restic_older_than MAJ.MIN: true if the installed restic is older.
restic_older_than() {
  python3 - "$RESTIC_VERSION" "$1" <<'EOF'
import sys
def v(s): return tuple(int(x) for x in s.split('.')[:2])
sys.exit(0 if v(sys.argv[1]) < v(sys.argv[2]) else 1)
EOF
}

# Flags for compare_trees when a tree went through restic's repository format reading code
# (restic backup or restic restore). restic < 0.16 has no linktarget_raw: a symlink target
# that is not valid UTF-8 is stored with every invalid byte replaced by U+FFFD (lossy).
restic_compare_flags() {
  if restic_older_than 0.16; then echo "--lossy-symlink-targets"; fi
}

# expect_exit CODE CMD...: run CMD, stdout -> $W/out, stderr -> $W/err (also $OUT/$ERR);
# fail (showing both) unless it exits with CODE.
OUT_N=0
expect_exit() {
  local want="$1"; shift
  OUT_N=$((OUT_N + 1))
  OUT="$W/out.$OUT_N"; ERR="$W/err.$OUT_N"
  local rc=0
  "$@" >"$OUT" 2>"$ERR" </dev/null || rc=$?
  cp "$OUT" "$W/out"; cp "$ERR" "$W/err"
  if [ "$rc" != "$want" ]; then
    {
      echo "---- command: $*"
      echo "---- expected exit $want, got $rc"
      echo "---- stdout (last 60 lines):"; tail -n 60 "$OUT"
      echo "---- stderr (last 60 lines):"; tail -n 60 "$ERR"
      echo "----"
    } >&2
    fail "unexpected exit code $rc (wanted $want) from: $*"
  fi
}

# run_ok CMD...: expect_exit 0.
run_ok() { expect_exit 0 "$@"; }

# assert_grep PATTERN FILE [WHAT]: extended-regexp match required.
assert_grep() {
  LC_ALL=C grep -aEq -- "$1" "$2" || { echo "---- $2:" >&2; tail -n 40 "$2" >&2; fail "${3:-expected /$1/ in $2}"; }
}

# restic / haven wrappers (repository given explicitly; password and cache from the env).
# Each run is bounded (CMD_TIMEOUT seconds, default 300) so that a hang fails the test with
# exit 124 instead of eating the whole CTest timeout.
r() { timeout -k 10 "${CMD_TIMEOUT:-300}" restic --cache-dir "$RESTIC_CACHE_DIR" "$@"; }
hv() { timeout -k 10 "${CMD_TIMEOUT:-300}" "$HAVEN" --cache-dir "$HAVEN_CACHE_DIR" "$@"; }

# restic's exit code for "repository is locked": 11 since restic 0.17, 1 before.
restic_lock_rc() { if restic_older_than 0.17; then echo 1; else echo 11; fi; }
# restic's exit code for a wrong password: 12 since 0.17, 1 before; no repository: 10 / 1.
restic_password_rc() { if restic_older_than 0.17; then echo 1; else echo 12; fi; }
restic_norepo_rc() { if restic_older_than 0.17; then echo 1; else echo 10; fi; }

# gen_bytes SEED SIZE: deterministic pseudo-random bytes on stdout.
gen_bytes() {
  python3 -c 'import random,sys
r=random.Random(int(sys.argv[1])); n=int(sys.argv[2])
out=sys.stdout.buffer
while n>0:
    k=min(n,1<<20); out.write(r.randbytes(k)); n-=k' "$1" "$2"
}

# make_tree DIR: build a tree holding every kind of metadata haven must round-trip.
# Sets MAKE_TREE_CHARDEV=1 if the char device node could be created (needs CAP_MKNOD), else 0.
# Needs root (chown, mknod). The tree is deterministic except for inode numbers and ctimes.
# Paths of note (relative to DIR) are exported for tests:
#   SPARSE_FILE=sparse.bin BIG_FILE=big20m.bin
make_tree() {
  local d="$1"
  need_cmd setfattr attr
  need_cmd getfattr attr
  need_python
  [ "$(id -u)" = 0 ] || fail "make_tree needs root (chown to 1234:5678, mknod)"
  mkdir -p "$d"
  # regular files of several sizes (one python process writes all the bulk data):
  # 100 KiB, 3 MiB random, 20 MiB = A(8 MiB) B(4 MiB) A(8 MiB) (partial repetition), and a
  # sparse file: 64 MiB hole with 4 KiB of data in the middle.
  : >"$d/empty"
  printf 'x' >"$d/one-byte"
  python3 - "$d" <<'PYEOF'
import os, random, sys
d = sys.argv[1]
def rnd(seed, n):
    return random.Random(seed).randbytes(n)
with open(os.path.join(d, "100k.bin"), "wb") as f:
    f.write(rnd(1, 100 << 10))
with open(os.path.join(d, "3m-random.bin"), "wb") as f:
    f.write(rnd(2, 3 << 20))
a = rnd(3, 8 << 20)
with open(os.path.join(d, "big20m.bin"), "wb") as f:
    f.write(a); f.write(rnd(4, 4 << 20)); f.write(a)
with open(os.path.join(d, "sparse.bin"), "wb") as f:
    f.truncate(64 << 20)
    f.seek(32 << 20)
    f.write(rnd(5, 4096))
PYEOF
  printf 'hello\n' >"$d/hello.txt"
  # nested dirs, an empty dir
  mkdir -p "$d/dir/sub/deeper" "$d/emptydir" "$d/dir/sub/emptysub"
  printf 'deep file\n' >"$d/dir/sub/deeper/file.txt"
  printf 'sub file\n' >"$d/dir/sub/s.txt"
  # symlinks
  ln -s hello.txt "$d/link-normal"
  ln -s ../dir/sub/deeper/file.txt "$d/dir/link-relative"
  ln -s does/not/exist "$d/link-dangling"
  ln -s "$(printf 'bad\xfftarget\nwith newline')" "$d/link-badutf8"
  # hard links: a pair, and a triple across two directories
  printf 'pair\n' >"$d/hl-pair-a"
  ln "$d/hl-pair-a" "$d/hl-pair-b"
  mkdir -p "$d/hl1" "$d/hl2"
  printf 'triple\n' >"$d/hl1/t1"
  ln "$d/hl1/t1" "$d/hl1/t2"
  ln "$d/hl1/t1" "$d/hl2/t3"
  # fifo, char device
  mkfifo "$d/fifo"
  MAKE_TREE_CHARDEV=0
  if mknod "$d/chardev-null" c 1 3 2>/dev/null; then
    MAKE_TREE_CHARDEV=1
  else
    log "NOTE: mknod not permitted here; tree has no char device node"
  fi
  export MAKE_TREE_CHARDEV
  # mode bits
  printf 'suid\n' >"$d/setuid-file"; chmod 4755 "$d/setuid-file"
  printf 'sgid\n' >"$d/setgid-file"; chmod 2755 "$d/setgid-file"
  mkdir "$d/setgid-dir"; printf 'in sgid\n' >"$d/setgid-dir/f"
  mkdir "$d/sticky-dir"; printf 'in sticky\n' >"$d/sticky-dir/f"
  printf 'private\n' >"$d/mode0600"
  printf 'readonly\n' >"$d/mode0444"
  mkdir "$d/dir0700"; printf 'x\n' >"$d/dir0700/x"
  # ownership
  printf 'owned\n' >"$d/owned-1234-5678"
  chown 1234:5678 "$d/owned-1234-5678"
  mkdir "$d/owned-dir"; chown 4321:8765 "$d/owned-dir"
  ln -s hello.txt "$d/owned-link"; chown -h 1234:5678 "$d/owned-link"
  # xattrs (user.* only; symlinks cannot carry user.* on Linux)
  printf 'xattr file\n' >"$d/xattr-file"
  setfattr -n user.text -v "plain value" "$d/xattr-file"
  setfattr -n user.binary -v 0x0001ff02fe0a "$d/xattr-file"
  setfattr -n user.empty "$d/xattr-file"
  setfattr -n user.onhardlink -v shared "$d/hl-pair-a"
  setfattr -n user.dirattr -v 0x64697200ff "$d/dir"
  # file names
  printf 'a\n' >"$d/name with spaces"
  printf 'b\n' >"$d/$(printf 'name\nwith newline')"
  printf 'c\n' >"$d/$(printf 'name\twith tab')"
  printf 'd\n' >"$d/$(printf 'bad\xffname')"
  printf 'e\n' >"$d/$(printf 'latin1-caf\xe9')"
  printf 'f\n' >"$d/quote\"s and 'single' and back\\slash\\\\"
  printf 'g\n' >"$d/emoji-😀-ünïcödé"
  printf 'h\n' >"$d/-leading-dash"
  printf 'i\n' >"$d/$(printf 'ctrl\x01\x7fchars')"
  printf 'j\n' >"$d/html <&> chars"
  mkdir "$d/$(printf 'dir\xfewith bad\nname')"
  printf 'k\n' >"$d/$(printf 'dir\xfewith bad\nname')/inner"
  SPARSE_FILE=sparse.bin BIG_FILE=big20m.bin
  export SPARSE_FILE BIG_FILE

  # Explicit mtimes, after all contents exist. Non-directories first (symlinks with -h),
  # then directories deepest first, so setting a child's time cannot disturb its parent.
  chmod 2755 "$d/setgid-dir"
  chmod 1777 "$d/sticky-dir"
  chmod 0600 "$d/mode0600"
  chmod 0444 "$d/mode0444"
  chmod 0700 "$d/dir0700"
  python3 - "$d" <<'EOF'
import os, sys
root = os.fsencode(sys.argv[1])
base = 1614834367  # 2021-03-04T05:06:07Z
paths = []
for dirpath, dirnames, filenames in os.walk(root):
    for n in sorted(filenames) + sorted(dirnames):
        p = os.path.join(dirpath, n)
        if not os.path.isdir(p) or os.path.islink(p):
            paths.append(p)
# deterministic, distinct times with odd nanoseconds: 2021-03-04T05:06:07.123456789 + i s
for i, p in enumerate(sorted(paths)):
    ns = (base + i * 61) * 10**9 + 123456789
    os.utime(p, ns=(ns, ns), follow_symlinks=False)
dirs = []
for dirpath, dirnames, filenames in os.walk(root):
    dirs.append(dirpath)
dirs.sort(key=lambda p: (-p.count(b'/'), p))
for i, p in enumerate(dirs):
    ns = (base - 86400 + i * 3600) * 10**9 + 987654321
    os.utime(p, ns=(ns, ns), follow_symlinks=False)
EOF
  # and one with touch -d, as a user would (fractional seconds to the nanosecond)
  touch -h -d '2021-03-04T05:06:07.123456789Z' "$d/link-dangling"
  touch -d '2021-03-04T05:06:07.123456789Z' "$d/hello.txt"
  touch -d '2021-03-04T05:06:07.123456789Z' "$d"
}

# compare_trees A B [compare_trees.py options...]: fail with the listing of differences.
compare_trees() {
  local a="$1" b="$2"; shift 2
  check "trees identical: $a vs $b ${*:-}"
  python3 "$TOOLS/compare_trees.py" "$@" "$a" "$b" || fail "trees differ: $a vs $b"
}

# sorted_ls_paths FILE: normalise `restic ls`/`haven ls` output to a sorted list of paths.
# restic 0.14 prints a header line "snapshot 4ff1c182 of [/path] filtered by [] at ...):" as
# the first line of STDOUT; it is dropped here (haven may print it on stdout or stderr).
# Names are printed raw (a newline in a name splits it over two lines, identically for both
# tools), so the comparison is byte-exact.
sorted_ls_paths() {
  LC_ALL=C grep -a -v '^snapshot [0-9a-f]\{8\} of ' "$1" | LC_ALL=C sort
}

# lock_files DIR: the final (64-hex) lock file names in DIR, skipping temporary files that a
# writer renames into place.
lock_files() { ls -A "$1" 2>/dev/null | LC_ALL=C grep -E '^[0-9a-f]{64}$' || true; }

# wait_for_lock DIR TIMEOUT_S: wait until DIR holds a final lock file; print its name.
wait_for_lock() {
  local dir="$1" t="$2" i=0 l
  while :; do
    l="$(lock_files "$dir")"
    if [ -n "$l" ]; then printf '%s\n' "$l"; return 0; fi
    i=$((i + 1)); [ $i -le $((t * 20)) ] || return 1
    sleep 0.05
  done
}

# write_generation DIR GEN FILES REPEAT BIG GEN_BYTES: generation GEN of a source tree that
# changes between backups: stable/ (FILES text files of REPEAT lines and a BIG-byte random
# big.bin, the same in every generation) and gen/ (three GEN_BYTES random files named and
# seeded by GEN; the previous generation's are removed).
write_generation() {
  python3 - "$@" <<'PY'
import os, random, shutil, sys
root, gen, files, repeat, big, size = sys.argv[1], *map(int, sys.argv[2:7])
def write(rel, data):
    p = os.path.join(root, rel)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "wb") as f:
        f.write(data)
for i in range(files):
    write("stable/f%02d.txt" % i, ("stable %d\n" % i).encode() * repeat)
write("stable/big.bin", random.Random(1).randbytes(big))
shutil.rmtree(os.path.join(root, "gen"), ignore_errors=True)
for i in range(3):
    write("gen/g%d-%d.bin" % (gen, i), random.Random(100 * gen + i).randbytes(size))
PY
}

# repo_listing REPO: "sha256  path" of every file of a repository but its locks, sorted.
repo_listing() {
  (cd "$1" && find . -type f ! -path './locks/*' -print0 | LC_ALL=C sort -z | xargs -0 sha256sum)
}
