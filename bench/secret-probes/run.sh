#!/bin/sh
# Outsider probes of the secret scanner: three generators of home-directory files, each
# written by a helper that did not read the rules (p1: dotfiles and configs of many tools,
# 150 secret files and 130 look-alikes a seed; p2: CI, IDE, framework and shell files, 120
# and 100; p3: hard look-alikes and messy files, 100 and 126). Every secret is random, in
# its real format. A positive counts as found when a finding names its file; any finding in
# a look-alike is a false alarm.
#
#   bench/secret-probes/run.sh [HAVEN] [SEED...]     (default build/haven; seeds 1 2 3)
#
# Each probe works in /tmp/blind, /tmp/blind2, /tmp/blind3 (its scripts name those
# folders). Needs python3 and python3-cryptography (p3 makes real key and certificate
# formats). Not part of make test: a measurement, like bench/scan-tree.sh; the scan
# version 10 figures are in the note of its stop.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
haven=$(realpath "${1:-build/haven}")
[ $# -gt 0 ] && shift
seeds=${*:-1 2 3}
for p in 1 2 3; do
  dir=/tmp/blind; [ "$p" = 1 ] || dir=/tmp/blind$p
  rm -rf "$dir" && mkdir -p "$dir" && cp "$here/p$p"/*.py "$dir/"
  for s in $seeds; do
    (cd "$dir" && python3 gen.py "$s" > /dev/null 2>&1)
    case $p in
      1) "$haven" scan "$dir/out_$s" > "$dir/found_$s.txt" 2>&1 || true
         (cd "$dir" && python3 score.py "$s" 2>/dev/null | head -1) ;;
      2) (cd "$dir" && HAVEN_BIN="$haven" python3 score.py "$s" | grep '^seed') ;;
      3) (cd "$dir" && HAVEN_BIN="$haven" python3 score.py "$s" 2>/dev/null | head -1) ;;
    esac | sed "s/^/p$p /"
  done
done
