#!/usr/bin/env bash
# Weak spots of the reliability issue, through the command line:
#   A. SIGINT, SIGTERM and SIGHUP while haven holds its lock (backup: shared lock; prune:
#      exclusive): exit 130, the lock file is removed and no temp file is left, so the next
#      check and prune run without `unlock` (restic removes its lock on Ctrl-C too)
#   B. a lock that aged while the process was stopped (SIGSTOP past the stale age, here
#      shortened with HAVEN_DEBUG_LOCK_TIMES) makes the command stop before it writes a
#      snapshot (exit 11, no new snapshot), also when another process removed the lock
#   C. key add refuses a 21st key (opening tries at most 20 key files, as restic does);
#      --key-hint / RESTIC_KEY_HINT opens with a key beyond the first 20 tried
#   D. check names `*-tmp-*` files a killed writer left (older than a day) and points at
#      prune, which removes them (younger ones stay: a writer may still be at work)
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../tools/lib.sh
source "$(dirname "$0")/../tools/lib.sh"
setup "$@"
need_restic
need_haven
need_python

R="$W/repo"
SRC="$W/src"
mkdir -p "$SRC"
gen_bytes 7 3000000 >"$SRC/big.bin"
for i in $(seq 1 50); do echo "file $i" >"$SRC/f$i.txt"; done
run_ok hv -r "$R" init
run_ok hv -r "$R" backup "$SRC"
count() { find "$1" -type f | wc -l; }
temp_files() { find "$R" -name '*-tmp-*' | wc -l; }

# freeze NAME ARGS...: start haven ARGS in the background; SIGSTOP it as soon as its lock
# file exists (tests/tools/stop_on_lock.py). Sets HP.
freeze() {
  local name="$1"; shift
  local try rc
  for try in 1 2 3; do
    rm -f "$W/go"; mkfifo "$W/go"
    ( read -r _ <"$W/go"; exec env ${FREEZE_ENV:-} "$HAVEN" --cache-dir "$HAVEN_CACHE_DIR" \
        -r "$R" "$@" >"$W/$name.out" 2>"$W/$name.err" </dev/null ) &
    HP=$!; bg_track "$HP"
    rc=0; python3 "$TOOLS/stop_on_lock.py" --release "$W/go" "$R/locks" "$HP" 120 >/dev/null || rc=$?
    if [ "$rc" = 0 ]; then STOPPED_PIDS+=("$HP"); return 0; fi
    wait "$HP" || true
    [ "$rc" = 3 ] || fail "$name: stop_on_lock failed (exit $rc)"
  done
  fail "$name: could not catch haven holding its lock"
}

# ---------------------------------------------------------------------------------------
check "A. signals remove the lock and temp files"
for sig in INT TERM HUP; do
  for cmd in "backup --force $SRC" "prune"; do
    # shellcheck disable=SC2086
    freeze "sig-$sig" $cmd
    [ "$(count "$R/locks")" = 1 ] || fail "A: no lock while frozen"
    kill "-$sig" "$HP"
    kill -CONT "$HP"
    rc=0; wait "$HP" || rc=$?
    # ThreadSanitizer runs a signal handler only when the receiving thread next enters one
    # of its interceptors, which may be after this short command ended: there a finished
    # command's 0 is accepted (the lock and temp checks below still apply).
    if [ "$rc" = 0 ] && sanitizer_build t; then
      log "A: $cmd on SIG$sig: exit 0 (TSan delivered the signal after the command ended)"
    else
      [ "$rc" = 130 ] || { cat "$W/sig-$sig.err"; fail "A: $cmd on SIG$sig exited $rc, not 130"; }
    fi
    [ "$(count "$R/locks")" = 0 ] || fail "A: $cmd on SIG$sig left its lock"
    [ "$(temp_files)" = 0 ] || fail "A: $cmd on SIG$sig left temp files: $(find "$R" -name '*-tmp-*')"
  done
done
run_ok hv -r "$R" check
run_ok hv -r "$R" prune
# A real interrupt in the middle of writing: a 200 MB backup interrupted after a moment.
gen_bytes 8 200000000 >"$SRC/huge.bin"
for delay in 0.3 0.8 1.5; do
  ( exec "$HAVEN" --cache-dir "$HAVEN_CACHE_DIR" -r "$R" backup --force "$SRC" \
      >"$W/mid.out" 2>"$W/mid.err" </dev/null ) &
  HP=$!; bg_track "$HP"
  sleep "$delay"
  kill -INT "$HP" 2>/dev/null || true
  rc=0; wait "$HP" || rc=$?
  [ "$rc" = 130 ] || [ "$rc" = 0 ] || { cat "$W/mid.err"; fail "A: interrupted backup exited $rc"; }
  [ "$(count "$R/locks")" = 0 ] || fail "A: interrupted backup (after ${delay}s) left its lock"
  [ "$(temp_files)" = 0 ] || fail "A: interrupted backup (after ${delay}s) left temp files"
done
rm -f "$SRC/huge.bin"
run_ok hv -r "$R" check
run_ok r -r "$R" check

# ---------------------------------------------------------------------------------------
check "B. a lock that aged while the process was stopped"
snaps_before=$(count "$R/snapshots")
# refresh every 1 s, stale after 4 s: stopped for 6 s, the lock may look stale to others.
FREEZE_ENV="HAVEN_DEBUG_LOCK_TIMES=1,4" freeze aged backup --force "$SRC"
sleep 6
kill -CONT "$HP"
rc=0; wait "$HP" || rc=$?
[ "$rc" = 11 ] || { cat "$W/aged.err"; fail "B: a backup whose lock aged exited $rc, not 11"; }
assert_grep "was not refreshed" "$W/aged.err" "B: no message about the aged lock"
[ "$(count "$R/snapshots")" = "$snaps_before" ] || fail "B: a snapshot was written after the lock aged"
[ "$(count "$R/locks")" = 0 ] || fail "B: the aged lock was left"
# Another process removes the stale lock meanwhile (as `unlock` would).
FREEZE_ENV="HAVEN_DEBUG_LOCK_TIMES=1,4" freeze aged2 backup --force "$SRC"
sleep 6
run_ok env HAVEN_DEBUG_LOCK_TIMES=1,4 "$HAVEN" --cache-dir "$HAVEN_CACHE_DIR" -r "$R" unlock
[ "$(count "$R/locks")" = 0 ] || fail "B: unlock did not remove the stale lock"
kill -CONT "$HP"
rc=0; wait "$HP" || rc=$?
[ "$rc" = 11 ] || { cat "$W/aged2.err"; fail "B: a backup whose lock was removed exited $rc"; }
[ "$(count "$R/snapshots")" = "$snaps_before" ] || fail "B: a snapshot was written after the lock was removed"
# Stopped for less than the limit: the backup goes on.
FREEZE_ENV="HAVEN_DEBUG_LOCK_TIMES=1,6" freeze short backup --force "$SRC"
sleep 1
kill -CONT "$HP"
rc=0; wait "$HP" || rc=$?
[ "$rc" = 0 ] || { cat "$W/short.err"; fail "B: a short stop failed the backup ($rc)"; }
[ "$(count "$R/snapshots")" = $((snaps_before + 1)) ] || fail "B: no snapshot after a short stop"

# ---------------------------------------------------------------------------------------
check "C. at most 20 keys; --key-hint"
K="$W/krepo"
run_ok hv -r "$K" init --scrypt 1024,8,1
first_key=$(ls "$K/keys")  # the test password's key
for i in $(seq 2 20); do
  echo "password-$i" >"$W/pw$i"
  run_ok hv -r "$K" key add --new-password-file "$W/pw$i"
done
[ "$(count "$K/keys")" = 20 ] || fail "C: expected 20 keys"
echo "password-21" >"$W/pw21"
expect_exit 1 hv -r "$K" key add --new-password-file "$W/pw21"
assert_grep "20" "$ERR" "C: the refusal does not say why"
[ "$(count "$K/keys")" = 20 ] || fail "C: a 21st key was added"
for i in 2 13 20; do
  run_ok env HAVEN_PASSWORD="password-$i" "$HAVEN" --cache-dir "$HAVEN_CACHE_DIR" -r "$K" snapshots
done
# A repository restic gave more keys (restic key add has no limit): the key beyond the
# first 20 opens with --key-hint, and without the hint the error says so.
for i in 21 22; do
  echo "password-$i" >"$W/pw$i"
  # restic, too, tries at most 20 key files: with 21 the test password's key may sort
  # beyond them ("maximum number of keys reached"), so it is named.
  run_ok r -r "$K" --key-hint "$first_key" key add --new-password-file "$W/pw$i"
done
# (the first password's key may now sort beyond the first 20: only hinted opens are sure)
# the key of password-22: the one haven does not know yet; find it by trying each
last=""
for k in $(ls "$K/keys"); do
  if HAVEN_PASSWORD=password-22 "$HAVEN" --no-cache -r "$K" --key-hint "$k" key list >/dev/null 2>&1; then
    last="$k"; break
  fi
done
[ -n "$last" ] || fail "C: --key-hint did not open the repository with any key"
run_ok env HAVEN_PASSWORD=password-22 RESTIC_KEY_HINT="${last:0:8}" "$HAVEN" --no-cache -r "$K" snapshots

# ---------------------------------------------------------------------------------------
check "D. check names stale temp files, prune removes them"
old_tmp="$R/data/ab/$(printf 'a%.0s' $(seq 1 64))-tmp-0123456789abcdef"
young_tmp="$R/snapshots/$(printf 'b%.0s' $(seq 1 64))-tmp-0123456789abcdef"
printf 'partial' >"$old_tmp"; printf 'partial' >"$young_tmp"
touch -d '2 days ago' "$old_tmp"
run_ok hv -r "$R" check
assert_grep "1 temp file older than a day .*haven prune" "$OUT" "D: check does not point at the stale temp file"
[ -e "$old_tmp" ] || fail "D: check removed a temp file"
run_ok hv -r "$R" prune
assert_grep "removed 1 stale temporary files" "$OUT" "D: prune did not report the removal"
[ ! -e "$old_tmp" ] || fail "D: the old temp file is still there"
[ -e "$young_tmp" ] || fail "D: a young temp file was removed"
run_ok hv -r "$R" prune --dry-run
[ -e "$young_tmp" ] || fail "D: dry run removed something"
rm -f "$young_tmp"
run_ok hv -r "$R" check --read-data
if grep -q "temp file" "$OUT"; then fail "D: check still reports temp files after prune"; fi

pass
