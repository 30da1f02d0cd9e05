#!/usr/bin/env bash
# kill -9 during `box add` (docs/box.md §3): at every step the debug hook reaches
# (HAVEN_DEBUG_KILL_AFTER_OPS=N: SIGKILL before the N+1th pack, index or snapshot write) and
# at several moments by timer (also inside the commit). After each kill the box opens at
# its previous state (or, killed after its commit, with the whole add): the same listing
# and snapshots, check --read-data clean, and the next add succeeds.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../tools/lib.sh
source "$(dirname "$0")/../tools/lib.sh"
setup "$@"
need_haven
need_python

B="$W/k.hbox"
mkdir -p "$W/base" "$W/more"
gen_bytes 1 3000000 >"$W/base/a.bin"
printf 'base\n' >"$W/base/b.txt"
for i in 1 2 3 4 5 6; do gen_bytes $((10 + i)) 3000000 >"$W/more/part$i.bin"; done
gen_bytes 99 200000000 >"$W/huge.bin"

run_ok hv box create "$B"
run_ok hv box add "$B" "$W/base"

state() {  # the box's listing and snapshot ids, one line each
  hv box list "$B" --long
  hv -r "box:$B" --no-cache snapshots --json | python3 -c '
import json,sys
for s in json.load(sys.stdin): print(s["id"], s["tree"])'
}
same_state() {  # same_state WHAT: the box is as in $W/state, and checks clean
  state >"$W/now" 2>"$W/now.err" || { cat "$W/now.err"; fail "$1: the box does not open"; }
  diff -u "$W/state" "$W/now" || fail "$1: the box changed"
  run_ok hv -r "box:$B" --no-cache check --read-data
  assert_grep 'no errors were found' "$OUT" "$1: check --read-data"
}
state >"$W/state"
journal_mode() { python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("PRAGMA journal_mode").fetchone()[0])' "$B"; }
in_wal_mode() {  # in_wal_mode WHAT: after a command opened it, the box is back in WAL mode
  [ "$(journal_mode)" = wal ] || fail "$1: the box is in $(journal_mode) mode, not WAL"
  [ ! -e "$B-journal" ] || fail "$1: $B-journal left behind"
}
# An add holds the box alone with a rollback journal (docs/box.md §3). Once its
# transaction has spilled pages into the file (past SQLite's 32 MiB page cache), a kill
# leaves a hot journal, rolled back by the next open: SQLite's journal magic at its start
# (before the first spill, and after a commit while the box is held, the header is zero).
hot_journal() {
  [ -s "$B-journal" ] && [ "$(head -c 8 "$B-journal" | od -An -tx1 | tr -d ' \n')" = d9d505f920a163d7 ]
}

check "SIGKILL after N writes (pack size 4 MiB: about 6 packs, a tree pack, index, snapshot)"
killed=0
journals=0
for n in 0 1 2 3 5 7 8 9 10 12 20; do
  rc=0
  HAVEN_DEBUG_KILL_AFTER_OPS=$n hv --pack-size 4 box add "$B" "$W/more" /more/$n \
    >"$W/kill.out" 2>&1 || rc=$?
  if [ "$rc" = 137 ]; then
    killed=$((killed + 1))
    if hot_journal; then journals=$((journals + 1)); fi
    same_state "kill after $n writes"
    in_wal_mode "kill after $n writes"
  elif [ "$rc" = 0 ]; then
    log "N=$n: the add completed (fewer writes than $n)"
    state >"$W/state"
    grep -q "^d.* /more/$n\$" "$W/state" || fail "completed add of /more/$n not listed"
  else
    cat "$W/kill.out"; fail "box add with N=$n exited $rc"
  fi
done
[ "$killed" -ge 6 ] || fail "only $killed of the runs were killed"
log "$killed runs killed ($journals with a hot journal), each left the box at its previous state"

check "SIGKILL after 48 MiB of a held add (spilled into the file): a hot journal, rolled back"
rc=0
HAVEN_DEBUG_KILL_AFTER_OPS=12 hv --pack-size 4 box add "$B" "$W/huge.bin" /huge-held \
  >"$W/kill.out" 2>&1 || rc=$?
[ "$rc" = 137 ] || { cat "$W/kill.out"; fail "box add after 12 writes exited $rc, not SIGKILL"; }
hot_journal || fail "no hot journal after a kill 48 MiB into the held add"
same_state "kill after 48 MiB of a held add"
in_wal_mode "kill after 48 MiB of a held add"

check "SIGKILL by timer during the add of a 200 MB file"
journals=0
for delay in 0.2 0.5 1.0 1.5 2.5; do
  # haven itself, not through hv's timeout: the SIGKILL must reach the process that writes.
  "$HAVEN" box add "$B" "$W/huge.bin" /huge-$delay >"$W/timer.out" 2>&1 &
  pid=$!
  bg_track "$pid"
  sleep "$delay"
  kill -9 "$pid" 2>/dev/null || true
  rc=0
  wait "$pid" 2>/dev/null || rc=$?
  if [ "$rc" = 0 ]; then
    log "delay $delay: the add finished before the kill"
    state >"$W/state"
  else
    [ "$rc" = 137 ] || { cat "$W/timer.out"; fail "timer kill: exit $rc"; }
    if hot_journal; then journals=$((journals + 1)); fi
    state >"$W/now" 2>"$W/now.err" || { cat "$W/now.err"; fail "kill after ${delay}s: no open"; }
    if ! diff -q "$W/state" "$W/now" >/dev/null; then
      # Killed after its commit (while closing): then the whole add is there, nothing less.
      log "delay $delay: killed after the commit"
      grep -q "^-.* 200000000 .* /huge-$delay\$" "$W/now" || { diff -u "$W/state" "$W/now"; fail "partial add"; }
      [ "$(wc -l <"$W/now")" = $(( $(wc -l <"$W/state") + 2 )) ] || fail "more than the add changed"
      cp "$W/now" "$W/state"
    fi
    same_state "kill after ${delay}s"
    in_wal_mode "kill after ${delay}s"
  fi
done
log "$journals timer kills left a hot journal; the box opened at its previous state each time"

check "the next add after the kills succeeds and checks clean"
run_ok hv box add "$B" "$W/more" /more/final
run_ok hv box list "$B"
assert_grep '^/more/final/part6.bin$' "$OUT"
run_ok hv -r "box:$B" --no-cache check --read-data
assert_grep 'no errors were found' "$OUT"
in_wal_mode "after the last add"
[ ! -e "$B-wal" ] || fail "$B-wal left behind: the box is not one file"

pass "kill -9 during box add never changes the box"
