#!/usr/bin/env bash
# Clocks that disagree (RELIABILITY.md case 24), with libfaketime shifting one process's
# clock (NO_FAKE_STAT=1: file times stay the storage's, as they would on a shared disk):
#   A. a machine whose clock runs an hour fast runs `unlock` while a backup holds a live
#      lock: the lock is kept (the storage got it seconds ago), the clock difference and
#      the kept lock are reported; `unlock --remove-all` still removes it
#   B. a backup from a machine a day behind warns about its clock
#   C. a snapshot dated a day in the future (a fast clock) is never the parent of a later
#      backup made at the right time (restic #3619)
#   D. forget policies with that future-dated snapshot in the repository decide as
#      restic 0.14 does on the same repository (dry runs compared as JSON)
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../tools/lib.sh
source "$(dirname "$0")/../tools/lib.sh"
setup "$@"
need_haven
need_restic
need_python
need_cmd faketime faketime
export NO_FAKE_STAT=1
# libfaketime is preloaded before an AddressSanitizer build's runtime, which ASan refuses by
# default ("ASan runtime does not come first"); the order is harmless for faketime's hooks.
if sanitizer_build a; then export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"; fi
# hv with this process's clock shifted by $1 (faketime's "+1h", "-1d" forms)
hv_at() { local shift="$1"; shift; expect_exit "$EXPECT" faketime -f "$shift" "$HAVEN" --cache-dir "$HAVEN_CACHE_DIR" "$@"; }

R="$W/repo"
SRC="$W/src"
mkdir -p "$SRC"; echo one >"$SRC/a"
run_ok hv -r "$R" init --scrypt 1024,8,1

# ---------------------------------------------------------------------------------------
check "A. unlock from a machine an hour fast keeps a live lock"
mkfifo "$W/fifo"
( exec sleep 600 >"$W/fifo" ) & WRITER=$!
bg_track "$WRITER"
( exec "$HAVEN" --cache-dir "$HAVEN_CACHE_DIR" -r "$R" backup --stdin --stdin-filename held \
    <"$W/fifo" >"$W/held.out" 2>&1 ) & HOLDER=$!
bg_track "$HOLDER"
LOCK=$(wait_for_lock "$R/locks" 20) || fail "A: the backup took no lock"
EXPECT=0 hv_at "+1h" -r "$R" unlock
[ -e "$R/locks/$LOCK" ] || fail "A: unlock from a fast clock removed a live lock"
assert_grep "clock is [0-9]+ s ahead of" "$ERR" "A: the clock difference is not reported"
assert_grep "lock ${LOCK:0:8}.*kept" "$ERR" "A: the kept lock is not reported"
run_ok hv -r "$R" unlock
[ -e "$R/locks/$LOCK" ] || fail "A: unlock with a right clock removed a live lock"
run_ok hv -r "$R" unlock --remove-all
[ ! -e "$R/locks/$LOCK" ] || fail "A: unlock --remove-all left the lock"
kill "$HOLDER" "$WRITER" 2>/dev/null || true
wait "$HOLDER" 2>/dev/null || true

# ---------------------------------------------------------------------------------------
check "B. a backup from a machine a day behind warns"
EXPECT=0 hv_at "-1d" -r "$R" backup "$SRC"
assert_grep "clock is [0-9]+ s behind" "$ERR" "B: no clock warning"

# ---------------------------------------------------------------------------------------
check "C. a future-dated snapshot is never the parent"
echo two >"$SRC/b"
EXPECT=0 hv_at "+1d" -r "$R" backup "$SRC"
FUTURE=$(grep -o 'snapshot [0-9a-f]\{8\} saved' "$OUT" | awk '{print $2}')
[ -n "$FUTURE" ] || fail "C: no snapshot id in the output"
run_ok hv -r "$R" backup "$SRC"
if grep -q "using parent snapshot $FUTURE" "$OUT"; then
  fail "C: the future-dated snapshot $FUTURE was used as the parent"
fi

# ---------------------------------------------------------------------------------------
check "D. forget with a future-dated snapshot, as restic decides"
for policy in "--keep-last 2" "--keep-daily 1" "--keep-within 2h"; do
  # shellcheck disable=SC2086  # the policy is two words
  run_ok r -r "$R" forget --dry-run --json $policy
  cp "$OUT" "$W/r.json"
  # shellcheck disable=SC2086
  run_ok hv -r "$R" forget --dry-run --json $policy
  cp "$OUT" "$W/h.json"
  python3 "$TOOLS/compare_forget.py" "$W/r.json" "$W/h.json" >"$W/cmp.txt" \
    || { cat "$W/cmp.txt" >&2; fail "D: $policy: restic and haven disagree"; }
done

pass
