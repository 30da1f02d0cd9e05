#!/usr/bin/env bash
# Lock interplay between restic and haven on one repository (restic semantics, FORMAT §13):
# an exclusive lock blocks every other lock; a non-exclusive lock blocks exclusive ones.
#
# How a lock is held for as long as the test needs, deterministically (no sleeps, no races):
#  * restic, exclusive: `restic key passwd --new-password-file FIFO` takes the exclusive lock
#    and then blocks opening the FIFO (nobody writes to it yet). Writing the same password
#    into the FIFO later lets it finish normally (it re-wraps the master key under the same
#    password) and remove its lock.
#  * restic, non-exclusive: `restic backup --stdin` reading from a FIFO whose write end the
#    test keeps open (fd 7): it takes its lock, then waits for stdin. Closing fd 7 ends it.
#  * haven (exclusive `check --read-data`, non-exclusive `backup --force`): haven runs in the
#    background; tests/tools/stop_on_lock.py polls locks/ every millisecond and SIGSTOPs haven
#    as soon as its lock file appears. restic and haven sleep 200 ms after writing a lock
#    before re-checking (FORMAT §13), so the stop always lands while the lock is held; the
#    helper also verifies the process is stopped and the lock still exists. The lock file is
#    then read back with `restic cat lock` to check it names haven's PID and the right
#    `exclusive` flag. SIGCONT lets haven finish; it must then succeed.
# Expected exit codes: haven 11 when locked out; restic 1 (< 0.17) or 11 (>= 0.17).
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
mkdir -p "$W/small"; printf 'small\n' >"$W/small/f"
RLOCK_RC="$(restic_lock_rc)"

run_ok r -r "$REPO" init
run_ok r -r "$REPO" backup "$SRC"

locks_empty() { [ -z "$(ls -A "$REPO/locks")" ] || fail "$1: locks/ not empty: $(ls "$REPO/locks")"; }
# lock_field ID FIELD: read a lock file with restic (no lock of its own) and print FIELD
lock_field() {
  r -r "$REPO" --no-lock cat lock "$1" >"$W/lock.json" || fail "restic cannot read lock $1"
  python3 -c 'import json,sys; v=json.load(open(sys.argv[1]))[sys.argv[2]]; print(str(v).lower())' \
    "$W/lock.json" "$2"
}
assert_locked_msg() { # assert_locked_msg WHO: stderr of the last expect_exit mentions the lock
  LC_ALL=C grep -aiq 'lock' "$ERR" || { cat "$ERR"; fail "$1: no message about the lock on stderr"; }
}

# --- 1. restic holds an exclusive lock ---------------------------------------------------
check "1. restic key passwd holds an exclusive lock (blocked on a FIFO)"
mkfifo "$W/newpw"
r -r "$REPO" key passwd --new-password-file "$W/newpw" >"$W/kp.out" 2>&1 &
KP=$!; bg_track "$KP"
L="$(wait_for_lock "$REPO/locks" 60)" || { cat "$W/kp.out"; fail "restic key passwd wrote no lock"; }
[ "$(lock_field "$L" exclusive)" = true ] || fail "restic's lock is not exclusive"

check "1. haven backup is refused with exit 11"
expect_exit 11 hv -r "$REPO" backup "$W/small"
assert_locked_msg "haven backup"
check "1. haven check (exclusive) is refused with exit 11"
expect_exit 11 hv -r "$REPO" check
assert_locked_msg "haven check"
check "1. haven snapshots (its lock confirmed after the listing) is refused with exit 11"
expect_exit 11 hv -r "$REPO" snapshots
assert_locked_msg "haven snapshots"
check "1. haven find, stats and forget (their lock confirmed after reading) are refused with exit 11, nothing printed"
for c in "find f" "stats" "forget --keep-last 1"; do
  # shellcheck disable=SC2086 # the command and its arguments
  expect_exit 11 hv -r "$REPO" $c
  assert_locked_msg "haven $c"
  [ ! -s "$OUT" ] || { cat "$OUT"; fail "haven $c printed before its lock was confirmed"; }
done
check "1. haven cat and tag (read beside the lock's check) are refused with exit 11; cat prints nothing, tag changes nothing"
SNAPS="$(ls "$REPO/snapshots")"
SNAP1="$(printf '%s\n' "$SNAPS" | head -n 1)"
expect_exit 11 hv -r "$REPO" cat snapshot "$SNAP1"
assert_locked_msg "haven cat snapshot"
[ ! -s "$OUT" ] || { cat "$OUT"; fail "haven cat printed before its lock was confirmed"; }
expect_exit 11 hv -r "$REPO" cat config
[ ! -s "$OUT" ] || { cat "$OUT"; fail "haven cat config printed before its lock was confirmed"; }
expect_exit 11 hv -r "$REPO" tag --add locked-out
assert_locked_msg "haven tag"
[ "$(ls "$REPO/snapshots")" = "$SNAPS" ] || fail "haven tag changed snapshots while locked out"
LC_ALL=C grep -aq 'modified' "$OUT" && { cat "$OUT"; fail "haven tag reported a change while locked out"; }
check "1. haven copy to and from the locked repository is refused with exit 11, nothing copied"
OTHER="$W/other"
run_ok hv -r "$OTHER" init
run_ok hv -r "$OTHER" backup "$W/small"
OTHER_SNAPS="$(ls "$OTHER/snapshots")"
export RESTIC_FROM_PASSWORD="$RESTIC_PASSWORD"
expect_exit 11 hv -r "$OTHER" copy --from-repo "$REPO"
assert_locked_msg "haven copy --from-repo (locked)"
[ "$(ls "$OTHER/snapshots")" = "$OTHER_SNAPS" ] || fail "haven copy from a locked repository copied"
expect_exit 11 hv -r "$REPO" copy --from-repo "$OTHER"
assert_locked_msg "haven copy -r (locked)"
[ "$(ls "$REPO/snapshots")" = "$SNAPS" ] || fail "haven copy into a locked repository copied"
[ -z "$(ls -A "$OTHER/locks")" ] || fail "haven copy left a lock in the other repository: $(ls "$OTHER/locks")"
[ "$(ls "$REPO/locks")" = "$L" ] || fail "haven left a lock behind or removed restic's: $(ls "$REPO/locks")"

check "1. release: restic finishes, then haven backup succeeds"
printf '%s' "$RESTIC_PASSWORD" >"$W/newpw"
rc=0; wait "$KP" || rc=$?
[ "$rc" = 0 ] || { cat "$W/kp.out"; fail "restic key passwd exit $rc"; }
locks_empty "after restic key passwd"
run_ok hv -r "$REPO" backup "$W/small"
locks_empty "after haven backup"

# --- 2. restic holds a non-exclusive lock ------------------------------------------------
check "2. restic backup --stdin holds a non-exclusive lock (waiting for stdin)"
mkfifo "$W/stdin"
exec 7<>"$W/stdin"
r -r "$REPO" backup --stdin --stdin-filename from-stdin.txt <"$W/stdin" >"$W/bs.out" 2>&1 7>&- &
BS=$!; bg_track "$BS"
L="$(wait_for_lock "$REPO/locks" 60)" || { cat "$W/bs.out"; fail "restic backup --stdin wrote no lock"; }
[ "$(lock_field "$L" exclusive)" = false ] || fail "restic backup's lock is exclusive?"

check "2. haven backup runs alongside (non-exclusive + non-exclusive): exit 0"
expect_exit 0 hv -r "$REPO" backup "$W/small" 7>&-
check "2. haven check (exclusive) is refused with exit 11"
expect_exit 11 hv -r "$REPO" check 7>&-
assert_locked_msg "haven check"
check "2. haven forget (exclusive) is refused with exit 11; haven find runs alongside"
expect_exit 11 hv -r "$REPO" forget --keep-last 1 7>&-
assert_locked_msg "haven forget"
expect_exit 0 hv -r "$REPO" find f 7>&-
[ "$(ls "$REPO/locks")" = "$L" ] || fail "haven left a lock behind or removed restic's: $(ls "$REPO/locks")"

check "2. release: restic backup --stdin completes"
printf 'from stdin\n' >&7
exec 7>&-
rc=0; wait "$BS" || rc=$?
[ "$rc" = 0 ] || { cat "$W/bs.out"; fail "restic backup --stdin exit $rc"; }
locks_empty "after restic backup --stdin"

# --- 3./4. haven holds a lock ------------------------------------------------------------
# hold_haven_lock NAME ARGS...: start haven ARGS in the background and freeze it while it
# holds its lock. Sets HP (pid) and HL (lock id). Retries twice if haven finished too fast.
hold_haven_lock() {
  local name="$1"; shift
  local try rc
  for try in 1 2 3; do
    rm -f "$W/go"; mkfifo "$W/go"
    # haven starts only when stop_on_lock is already watching (it writes into the FIFO);
    # exec keeps the pid, so $! is haven's pid.
    ( read -r _ <"$W/go"; exec "$HAVEN" --cache-dir "$HAVEN_CACHE_DIR" -r "$REPO" "$@" \
        >"$W/$name.out" 2>"$W/$name.err" </dev/null ) &
    HP=$!; bg_track "$HP"
    rc=0; HL="$(python3 "$TOOLS/stop_on_lock.py" --release "$W/go" "$REPO/locks" "$HP" 120)" || rc=$?
    if [ "$rc" = 0 ]; then STOPPED_PIDS+=("$HP"); return 0; fi
    wait "$HP" || true
    [ "$rc" = 3 ] || fail "$name: stop_on_lock failed (exit $rc)"
    log "$name: haven finished before it could be frozen (try $try), retrying"
    tail -5 "$W/$name.err"
  done
  fail "$name: could not catch haven holding its lock (does it sleep 200 ms after locking like restic?)"
}
resume_haven() { # resume_haven NAME: SIGCONT, wait; haven must exit 0
  kill -CONT "$HP"
  local rc=0; wait "$HP" || rc=$?
  [ "$rc" = 0 ] || { tail -20 "$W/$1.err"; fail "$1: haven exit $rc after being resumed"; }
}

check "3. haven check --read-data holds an exclusive lock (frozen with SIGSTOP)"
hold_haven_lock check check --read-data
[ "$(lock_field "$HL" pid)" = "$HP" ] || fail "lock $HL does not carry haven's pid $HP"
[ "$(lock_field "$HL" exclusive)" = true ] || fail "haven check's lock is not exclusive"
check "3. restic backup is refused (exit $RLOCK_RC)"
expect_exit "$RLOCK_RC" r -r "$REPO" backup "$W/small"
assert_grep 'already locked exclusively' "$ERR" "restic did not report haven's exclusive lock"
check "3. restic check is refused (exit $RLOCK_RC)"
expect_exit "$RLOCK_RC" r -r "$REPO" check
assert_grep 'already locked' "$ERR"
check "3. resumed haven check completes with exit 0"
resume_haven check
locks_empty "after haven check"

check "4. haven backup holds a non-exclusive lock (frozen with SIGSTOP)"
hold_haven_lock backup backup --force "$SRC"
[ "$(lock_field "$HL" pid)" = "$HP" ] || fail "lock $HL does not carry haven's pid $HP"
[ "$(lock_field "$HL" exclusive)" = false ] || fail "haven backup's lock is exclusive"
check "4. restic backup runs alongside: exit 0"
expect_exit 0 r -r "$REPO" backup "$W/small"
check "4. restic check (exclusive) is refused (exit $RLOCK_RC)"
expect_exit "$RLOCK_RC" r -r "$REPO" check
assert_grep 'already locked' "$ERR"
check "4. resumed haven backup completes with exit 0"
resume_haven backup
locks_empty "after haven backup"

check "repository is clean afterwards"
run_ok r -r "$REPO" check --read-data
assert_grep 'no errors were found' "$OUT"

pass "restic and haven respect each other's locks"
