#!/usr/bin/env bash
# Full disks and racing processes (RELIABILITY.md cases 12, 16, 17, 25):
#   A. the repository on a small tmpfs fills during a backup: exit 1 naming the cause (no
#      space), no temp file, no lock left, the repository checks clean; once there is room
#      (remount larger) the next backup completes and restic check --read-data is clean
#   B. the cache on a full tmpfs: the backup still succeeds (the cache is only a cache)
#   C. the restore target on a small tmpfs: the files that fit are restored intact, the
#      others are reported, exit 1, no crash
#   D. two backups at once (different and shared data) both succeed; then a backup and a
#      prune race: each either finishes or stops on the lock (exit 11), never both writing;
#      check --read-data (haven and restic) is clean and every snapshot restores intact
# Needs root to mount tmpfs (CI runs as root); it fails, never skips, when it cannot.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../tools/lib.sh
source "$(dirname "$0")/../tools/lib.sh"
setup "$@"
need_restic
need_haven
need_python

MOUNTS=()
small_fs() {  # small_fs DIR SIZE
  mkdir -p "$1"
  mount -t tmpfs -o "size=$2" tmpfs "$1" || fail "cannot mount a tmpfs on $1 (this test needs root)"
  MOUNTS+=("$1")
}
unmount_all() {
  local m
  for m in "${MOUNTS[@]+"${MOUNTS[@]}"}"; do umount -l "$m" 2>/dev/null || true; done
}
trap 'rc=$?; unmount_all; _cleanup; exit $rc' EXIT

SRC="$W/src"
mkdir -p "$SRC/small"
gen_bytes 31 40000000 >"$SRC/big.bin"
for i in $(seq 1 100); do echo "small $i" >"$SRC/small/f$i"; done
sums() { (cd "$1" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum); }

# ---------------------------------------------------------------------------------------
check "A. the repository's disk fills"
small_fs "$W/fs-repo" 20m
R="$W/fs-repo/repo"
run_ok hv -r "$R" init --scrypt 1024,8,1
expect_exit 1 hv -r "$R" backup "$SRC"
assert_grep "[Nn]o space left on device" "$ERR" "A: the error does not name the cause"
[ -z "$(find "$R" -name '*-tmp-*')" ] || fail "A: temp files left: $(find "$R" -name '*-tmp-*')"
[ -z "$(lock_files "$R/locks")" ] || fail "A: the lock was left"
[ -z "$(ls -A "$R/snapshots")" ] || fail "A: a snapshot was written"
run_ok hv -r "$R" check
run_ok r -r "$R" check
mount -o remount,size=200m "$W/fs-repo" || fail "cannot grow the tmpfs"
run_ok hv -r "$R" backup "$SRC"
run_ok hv -r "$R" check --read-data
run_ok r -r "$R" check --read-data
run_ok hv -r "$R" prune
run_ok r -r "$R" check --read-data

# ---------------------------------------------------------------------------------------
check "B. the cache's disk is full"
small_fs "$W/fs-cache" 1m
head -c 2000000 /dev/zero >"$W/fs-cache/filler" 2>/dev/null || true
R2="$W/repo2"
run_ok hv -r "$R2" init --scrypt 1024,8,1
run_ok "$HAVEN" --cache-dir "$W/fs-cache/c" -r "$R2" backup "$SRC"
run_ok "$HAVEN" --cache-dir "$W/fs-cache/c" -r "$R2" snapshots
run_ok "$HAVEN" --cache-dir "$W/fs-cache/c" -r "$R2" restore latest --target "$W/restore-b"
diff <(sums "$SRC") <(sums "$W/restore-b/$SRC") >/dev/null || fail "B: restore differs"

# ---------------------------------------------------------------------------------------
check "C. the restore target's disk fills"
# With one worker big.bin (first by name, and in the first packs) is written first and
# fills the disk before any small file: only giving its space back lets them in. With
# all workers the order is a race, which must not matter either.
small_fs "$W/fs-target" 10m
for jobs in 1 auto; do
  rm -rf "$W/fs-target/t"
  expect_exit 1 hv --jobs "$jobs" -r "$R2" restore latest --target "$W/fs-target/t"
  assert_grep "There were 1 errors" "$ERR" "C ($jobs): not exactly one error"
  assert_grep "big.bin.*[Nn]o space left on device" "$ERR" "C ($jobs): the file that did not fit is not named with the cause"
  ok=0
  for i in $(seq 1 100); do
    [ "$(cat "$W/fs-target/t/$SRC/small/f$i" 2>/dev/null)" = "small $i" ] && ok=$((ok + 1))
  done
  [ "$ok" = 100 ] || fail "C ($jobs): only $ok of the 100 small files were restored intact"
  [ "$(stat -c %s "$W/fs-target/t/$SRC/big.bin")" = 0 ] || fail "C ($jobs): the partial big.bin was left holding space"
done

# ---------------------------------------------------------------------------------------
check "D. two backups at once, then a backup racing a prune"
R3="$W/repo3"
run_ok hv -r "$R3" init --scrypt 1024,8,1
mkdir -p "$W/other"
gen_bytes 32 20000000 >"$W/other/o.bin"
cp "$SRC/big.bin" "$W/other/shared.bin"   # the same data in both backups
( "$HAVEN" --cache-dir "$HAVEN_CACHE_DIR" -r "$R3" backup "$SRC" >"$W/b1.out" 2>&1 ) & P1=$!
( "$HAVEN" --cache-dir "$HAVEN_CACHE_DIR" -r "$R3" backup "$W/other" >"$W/b2.out" 2>&1 ) & P2=$!
bg_track "$P1"; bg_track "$P2"
rc1=0; wait "$P1" || rc1=$?
rc2=0; wait "$P2" || rc2=$?
[ "$rc1" = 0 ] && [ "$rc2" = 0 ] || { cat "$W/b1.out" "$W/b2.out"; fail "D: concurrent backups: $rc1 $rc2"; }
run_ok hv -r "$R3" check --read-data
gen_bytes 33 20000000 >"$W/other/o.bin"
run_ok hv -r "$R3" forget --keep-last 1 --path "$W/other"
for round in 1 2 3; do
  gen_bytes $((40 + round)) 5000000 >"$SRC/round.bin"
  ( "$HAVEN" --cache-dir "$HAVEN_CACHE_DIR" -r "$R3" backup "$SRC" >"$W/rb.out" 2>&1 ) & PB=$!
  ( "$HAVEN" --cache-dir "$HAVEN_CACHE_DIR" -r "$R3" prune >"$W/rp.out" 2>&1 ) & PP=$!
  bg_track "$PB"; bg_track "$PP"
  rcb=0; wait "$PB" || rcb=$?
  rcp=0; wait "$PP" || rcp=$?
  { [ "$rcb" = 0 ] || [ "$rcb" = 11 ]; } && { [ "$rcp" = 0 ] || [ "$rcp" = 11 ]; } \
    || { cat "$W/rb.out" "$W/rp.out"; fail "D: race $round: backup $rcb, prune $rcp"; }
  log "race $round: backup exit $rcb, prune exit $rcp"
  [ -z "$(lock_files "$R3/locks")" ] || fail "D: a lock was left"
  run_ok hv -r "$R3" check
done
run_ok hv -r "$R3" check --read-data
run_ok r -r "$R3" check --read-data
run_ok hv -r "$R3" snapshots --json
for id in $(python3 -c 'import json,sys; [print(s["id"]) for s in json.load(open(sys.argv[1]))]' "$OUT"); do
  rm -rf "$W/rd"
  run_ok hv -r "$R3" restore "$id" --target "$W/rd" --verify
done

pass
