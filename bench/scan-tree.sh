#!/usr/bin/env bash
# `haven scan` over directory trees, two binaries side by side (issue 17): a base build and
# the build under test, alternating, ROUNDS rounds each, wall and CPU (user + sys) per run;
# prints the medians and new/base. Both see the same page cache (a warm-up run of each
# first), the same trees and the same findings (the exit codes and finding counts must
# agree, or the script fails).
#   bench/scan-tree.sh BASE_HAVEN NEW_HAVEN [ROUNDS] -- DIR...
# Default trees: /usr/share /etc. Run on a quiet machine; the load average is printed.
set -euo pipefail
BASE="$(realpath "$1")"
NEW="$(realpath "$2")"
shift 2
ROUNDS=5
if [ $# -gt 0 ] && [ "$1" != "--" ]; then ROUNDS="$1"; shift; fi
[ "${1:-}" = "--" ] && shift
DIRS=("$@")
[ ${#DIRS[@]} -gt 0 ] || DIRS=(/usr/share /etc)
W="$(mktemp -d /tmp/haven-scan-tree.XXXXXX)"
trap 'rm -rf "$W"' EXIT
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "trees: ${DIRS[*]}; $ROUNDS rounds"
run() {  # run TOOL LABEL: one scan, appends "wall cpu" to $W/LABEL, its output to $W/LABEL.out
  # (exit 4 = findings: expected on /etc's ssh host keys)
  /usr/bin/time -o "$W/time" -f "%e %U %S" "$1" scan "${DIRS[@]}" >"$W/$2.out" 2>&1 || true
  tail -1 "$W/time" | awk '{printf "%s %.2f\n", $1, $2 + $3}' >>"$W/$2"
}
run "$BASE" warm; run "$NEW" warm
for ((i = 0; i < ROUNDS; i++)); do run "$BASE" base; run "$NEW" new; done
grep '^scanned' "$W/base.out" | sed 's/^/base: /'
grep '^scanned' "$W/new.out" | sed 's/^/new:  /'
[ "$(grep '^scanned' "$W/base.out" | grep -o '[0-9]* findings')" = \
  "$(grep '^scanned' "$W/new.out" | grep -o '[0-9]* findings')" ] ||
  { echo "the two builds report different numbers of findings" >&2; exit 1; }
median() { sort -n | awk '{v[NR]=$1} END{print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
bw=$(cut -d' ' -f1 "$W/base" | median); nw=$(cut -d' ' -f1 "$W/new" | median)
bc=$(cut -d' ' -f2 "$W/base" | median); nc=$(cut -d' ' -f2 "$W/new" | median)
printf '%-6s wall %6.2f s  cpu %6.2f s  (rounds: %s)\n' base "$bw" "$bc" "$(cut -d' ' -f1 "$W/base" | tr '\n' ' ')"
printf '%-6s wall %6.2f s  cpu %6.2f s  (rounds: %s)\n' new "$nw" "$nc" "$(cut -d' ' -f1 "$W/new" | tr '\n' ' ')"
awk -v a="$nw" -v b="$bw" -v c="$nc" -v d="$bc" 'BEGIN{printf "new/base: wall %.2f, cpu %.2f\n", a/b, c/d}'
