#!/usr/bin/env bash
# Many clients, one bucket (a real radosgw, tests/tools/s3_lib.sh):
#   8 haven processes back up 8 different trees (each with the same 4 MiB file and 3 MiB
#   shared between pairs) into one bucket at once, twice (the second after a change);
#   then forget --keep-last 1 --prune --max-unused 0 runs (retried while a lock holds it
#   off) while two more backups run. Afterwards: every snapshot restores identically,
#   restic check --read-data is clean, and every blob is stored once (restic list blobs has
#   no duplicate), so the shared content is stored once.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../tools/lib.sh
source "$(dirname "$0")/../tools/lib.sh"
# shellcheck source-path=SCRIPTDIR source=../tools/s3_lib.sh
source "$(dirname "$0")/../tools/s3_lib.sh"
setup "$@"
need_restic
need_haven
need_python
s3_setup

REPO="$(s3_repo many)"
N=8
gen_bytes 1 4194304 >"$W/shared-all.bin"
for i in $(seq 1 $N); do
  d="$W/tree$i"
  mkdir -p "$d/sub"
  cp "$W/shared-all.bin" "$d/shared-all.bin"
  gen_bytes $((100 + (i + 1) / 2)) 3145728 >"$d/shared-pair.bin"
  gen_bytes $((200 + i)) 500000 >"$d/own.bin"
  for j in $(seq 1 40); do echo "tree $i file $j" >"$d/sub/f$j.txt"; done
done

run_ok hv -r "$REPO" init

# backup_all ROUND: N concurrent backups, each must exit 0.
backup_all() {
  local pids=() i rc=0
  for i in $(seq 1 $N); do
    hv -r "$REPO" backup --host "client$i" "$W/tree$i" >"$W/out.b$1.$i" 2>"$W/err.b$1.$i" </dev/null &
    pids+=($!)
  done
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}" || { rc=$?; echo "---- client $((i + 1)):"; cat "$W/err.b$1.$((i + 1))"; } >&2
  done
  [ $rc = 0 ] || fail "a concurrent backup failed (round $1)"
}

check "$N concurrent backups into one bucket"
start=$SECONDS
backup_all 1
log "round 1: $((SECONDS - start)) s"
for i in $(seq 1 $N); do echo "round 2" >>"$W/tree$i/sub/f1.txt"; done
backup_all 2

check "forget --prune while two more backups run"
for i in 1 2; do
  cp -a "$W/tree$i" "$W/tree$i.round2"
  echo "round 3" >>"$W/tree$i/sub/f2.txt"
done
# A command that finds the repository locked (exit 11: prune holds it, or a backup holds
# it off prune) tries again, as a scheduler would; any other failure fails.
until_unlocked() {
  local out=$1 rc try; shift
  for try in $(seq 1 90); do
    rc=0
    "$@" >"$W/out.$out" 2>"$W/err.$out" </dev/null || rc=$?
    [ $rc = 11 ] || return $rc
    sleep 1
  done
  return 11
}
until_unlocked b3.1 hv -r "$REPO" backup --host client1 "$W/tree1" &
B1=$!
until_unlocked b3.2 hv -r "$REPO" backup --host client2 "$W/tree2" &
B2=$!
sleep 0.5
bg_track $B1
bg_track $B2
pruned=0
for attempt in $(seq 1 60); do
  rc=0
  hv -r "$REPO" forget --keep-last 1 --prune --max-unused 0 >"$W/out.prune" 2>"$W/err.prune" </dev/null || rc=$?
  if [ $rc = 0 ]; then pruned=1; break; fi
  [ $rc = 11 ] || { cat "$W/err.prune" >&2; fail "forget --prune failed with exit $rc"; }
  sleep 1
done
[ $pruned = 1 ] || fail "forget --prune never got the lock"
log "forget --prune ran after $attempt attempt(s)"
wait $B1 || fail "backup 1 during prune failed: $(cat "$W/err.b3.1")"
wait $B2 || fail "backup 2 during prune failed: $(cat "$W/err.b3.2")"

check "restic check --read-data is clean"
run_ok r -r "$REPO" check --read-data
assert_grep 'no errors were found' "$OUT"

check "every snapshot restores identically"
run_ok hv -r "$REPO" snapshots --json
# id, path, and whether it is the newest snapshot of its path (older ones hold round 2)
python3 -c '
import json, sys
snaps = json.load(open(sys.argv[1]))
newest = {}
for s in snaps:
    p = s["paths"][0]
    if p not in newest or s["time"] > newest[p]["time"]: newest[p] = s
for s in snaps: print(s["id"], s["paths"][0], int(newest[s["paths"][0]] is s))' "$OUT" >"$W/snaps.txt"
[ "$(wc -l <"$W/snaps.txt")" -ge $N ] || fail "expected at least $N snapshots: $(cat "$W/snaps.txt")"
while read -r id path is_newest; do
  run_ok hv -r "$REPO" restore "$id" --target "$W/restore-$id"
  if [ "$is_newest" = 1 ]; then
    compare_trees "$path" "$W/restore-$id$path"
  else
    compare_trees "$path.round2" "$W/restore-$id$path"
  fi
done <"$W/snaps.txt"

check "shared content is stored once (no duplicate blob)"
run_ok r -r "$REPO" list blobs --no-lock
dups=$(awk '{print $2}' "$OUT" | sort | uniq -d | wc -l)
[ "$dups" = 0 ] || fail "$dups blobs are stored more than once"
run_ok r -r "$REPO" stats --mode raw-data --no-lock
log "$(grep -i 'total size' "$OUT" | head -1)"

check "no secret key or password in any output"
assert_no_secrets

pass "$N clients share one bucket; prune ran safely beside backups"
