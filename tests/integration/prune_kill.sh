#!/usr/bin/env bash
# prune killed with SIGKILL at several points, and prune refusing on damage (issue 4,
# RELIABILITY.md). The debug hook HAVEN_DEBUG_KILL_AFTER_OPS=N makes haven SIGKILL itself
# at its (N+1)th save or remove of a non-lock file (docs/cli.md).
#   K. a haven repository with 3 backups, 2 forgotten; prune's mutating calls counted;
#      for kill points from 0 to the last call: prune dies (137); haven unlock removes
#      its stale lock; then haven check and
#      restic check are clean (unreferenced packs allowed), the kept snapshot is readable,
#      a second prune finishes, restic check --read-data is clean and a file dumps intact
#   R. prune refuses (exit 1, nothing changed) with a missing index file and with a used
#      blob missing from the index (its pack deleted, index rebuilt)
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../tools/lib.sh
source "$(dirname "$0")/../tools/lib.sh"
setup "$@"
need_restic
need_haven
need_python

SRC="$W/src"
generation() {
  write_generation "$SRC" "$1" 10 40 $((1 << 20)) $((300 << 10))
}
listing() { repo_listing "$1"; }

BASE="$W/base"
run_ok hv -r "$BASE" init
for g in 1 2 3; do
  generation "$g"
  run_ok hv -r "$BASE" backup "$SRC"
done
run_ok hv -r "$BASE" forget --keep-last 1
run_ok hv -r "$BASE" snapshots --json
KEPT="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[0]["short_id"])' "$OUT")"

# How many mutating calls a full prune makes: files added plus files removed.
FULL="$W/full"
cp -a "$BASE" "$FULL"
listing "$FULL" | awk '{print $2}' >"$W/before"
run_ok hv -r "$FULL" prune
listing "$FULL" | awk '{print $2}' >"$W/after"
TOTAL=$(( $(comm -13 "$W/before" "$W/after" | wc -l) + $(comm -23 "$W/before" "$W/after" | wc -l) ))
log "a full prune makes $TOTAL saves/removes"
[ "$TOTAL" -ge 6 ] || fail "prune did too little to test kill points ($TOTAL calls)"
rm -rf "$FULL"

# Kill points: the start, the first calls (new packs), the middle (index files) and the
# last ones (pack deletion).
POINTS="$(printf '%s\n' 0 2 $((TOTAL / 2)) $((TOTAL - 1)) | sort -nu)"
for n in $POINTS; do
  check "K. prune killed after $n of $TOTAL calls"
  K="$W/k$n"
  cp -a "$BASE" "$K"
  HAVEN_DEBUG_KILL_AFTER_OPS=$n expect_exit 137 hv -r "$K" prune
  # The dead process left its exclusive lock: stale (its PID is gone), so unlock removes it.
  [ -n "$(lock_files "$K/locks")" ] || fail "K$n: the killed prune left no lock (was it killed?)"
  run_ok hv -r "$K" unlock
  [ -z "$(lock_files "$K/locks")" ] || fail "K$n: unlock left the stale lock"
  run_ok hv -r "$K" check
  run_ok r -r "$K" check
  run_ok hv -r "$K" cat snapshot "$KEPT"
  run_ok hv -r "$K" prune
  run_ok r -r "$K" check --read-data
  run_ok hv -r "$K" dump "$KEPT" "$SRC/stable/big.bin"
  cmp -s "$OUT" "$SRC/stable/big.bin" || fail "K$n: big.bin of the kept snapshot differs"
  rm -rf "$K"
done

# ---------------------------------------------------------------------------------------
check "R1. prune refuses with an index file missing"
R1="$W/r1"
cp -a "$BASE" "$R1"
# the newest index file: written by the third backup, it lists the kept snapshot's packs
rm "$(find "$R1/index" -type f -printf '%T@ %p\n' | sort -n | tail -n 1 | cut -d' ' -f2)"
listing "$R1" >"$W/r1a"
expect_exit 1 hv -r "$R1" prune
# (the walk meets a tree whose index entry went with the file)
assert_grep '(tree|data) blob [0-9a-f]{64} (is not in|not found in) the index' "$ERR" "R1: no clear message"
listing "$R1" >"$W/r1b"
cmp -s "$W/r1a" "$W/r1b" || fail "R1: refused prune changed the repository"

check "R2. prune refuses with a used blob not in the index (pack deleted, index rebuilt)"
R2="$W/r2"
cp -a "$BASE" "$R2"
# the largest pack holds data of the kept snapshot (stable/big.bin)
rm "$(find "$R2/data" -type f -printf '%s %p\n' | sort -n | tail -n 1 | cut -d' ' -f2)"
run_ok hv -r "$R2" repair index
listing "$R2" >"$W/r2a"
expect_exit 1 hv -r "$R2" prune
assert_grep 'data blob [0-9a-f]{64}' "$ERR" "R2: the missing blob is not named"
assert_grep 'Will not start prune' "$ERR" "R2: no refusal message"
listing "$R2" >"$W/r2b"
cmp -s "$W/r2a" "$W/r2b" || fail "R2: refused prune changed the repository"

pass
