#!/usr/bin/env bash
# Times issue 14's read-only commands against restic 0.14 on the same repository of a
# large tree (default /usr/share), one tool after the other, median of N runs each, with
# the load average printed beside (the machine is shared). Not part of `make test`.
#
#   bench/cmds-vs-restic.sh [--haven BIN] [--tree DIR] [--rounds N] [--work DIR]
#
# The repository holds two snapshots of TREE plus a small folder that changes in a few
# files between them (written by haven, whose node atime is the mtime, so TREE's subtrees
# are identical in both). Rows: diff of the two snapshots, stats --mode raw-data of both,
# stats (restore-size) of one, find of a pattern over both.
set -euo pipefail
HAVEN="$(pwd)/build/haven" TREE=/usr/share ROUNDS=3 WORK="${TMPDIR:-/tmp}/haven-cmds-bench"
while [ $# -gt 0 ]; do
  case "$1" in
    --haven) HAVEN="$2"; shift 2 ;;
    --tree) TREE="$2"; shift 2 ;;
    --rounds) ROUNDS="$2"; shift 2 ;;
    --work) WORK="$2"; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
command -v restic >/dev/null || { echo "restic is missing (apt-get install restic)" >&2; exit 1; }
export RESTIC_PASSWORD=bench HAVEN_PASSWORD=bench
REPO="$WORK/repo" EXTRA="$WORK/extra"
if [ ! -f "$REPO/config" ]; then
  rm -rf "$WORK"
  mkdir -p "$EXTRA/sub"
  for i in $(seq 1 20); do printf 'file %s\n' "$i" >"$EXTRA/sub/f$i"; done
  "$HAVEN" -r "$REPO" init --scrypt 1024,8,1 -q
  "$HAVEN" -r "$REPO" backup -q "$TREE" "$EXTRA" >/dev/null
  printf 'changed\n' >>"$EXTRA/sub/f3"; rm "$EXTRA/sub/f7"; printf 'new\n' >"$EXTRA/new"
  "$HAVEN" -r "$REPO" backup -q "$TREE" "$EXTRA" >/dev/null
fi
mapfile -t S < <("$HAVEN" -r "$REPO" snapshots --json | python3 -c '
import json, sys
for s in json.load(sys.stdin)[-2:]: print(s["id"])')
# Warm both caches once.
restic -r "$REPO" --cache-dir "$WORK/rc" diff "${S[0]}" "${S[1]}" >/dev/null
"$HAVEN" -r "$REPO" --cache-dir "$WORK/hc" diff "${S[0]}" "${S[1]}" >/dev/null

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
run() {  # run TOOL ARGS...: median seconds of ROUNDS runs
  local tool="$1"; shift
  local cache="$WORK/rc" bin=restic
  [ "$tool" = haven ] && cache="$WORK/hc" bin="$HAVEN"
  for _ in $(seq "$ROUNDS"); do
    local t0 t1
    t0=$(date +%s.%N)
    "$bin" -r "$REPO" --cache-dir "$cache" "$@" >/dev/null
    t1=$(date +%s.%N)
    echo "$t1 - $t0" | bc
  done | median
}
printf '%-34s %9s %9s %7s  %s\n' "command" "restic s" "haven s" "ratio" "load (1 min) before"
for row in "diff ${S[0]} ${S[1]}" "stats --mode raw-data" "stats ${S[1]}" "find *.png"; do
  load=$(cut -d' ' -f1 /proc/loadavg)
  # shellcheck disable=SC2086
  rt=$(run restic $row)
  # shellcheck disable=SC2086
  ht=$(run haven $row)
  printf '%-34s %9.2f %9.2f %7.2f  %s\n' "${row:0:34}" "$rt" "$ht" "$(echo "$ht / $rt" | bc -l)" "$load"
done
