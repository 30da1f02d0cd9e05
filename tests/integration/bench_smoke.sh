#!/usr/bin/env bash
# Smoke test of the side-by-side benchmark (bench/README.md), so the script cannot rot:
# bench/compare --quick --rounds 1 --no-results against the haven binary under test, with
# restic (installed from Debian when missing), every workload B1..B13 at tiny sizes. borg is
# skipped (--peers restic) so that the test fits in about a minute on a busy 2-core machine
# (bench/README.md, "Quick mode"); for the same reason every repository gets cheap scrypt
# parameters (--scrypt 1024,8,1) instead of restic's calibrated ones. It checks that every
# workload ran and printed its numbers, not the numbers themselves.
source "$(dirname "$0")/../tools/lib.sh"
setup "$@"
need_haven
need_restic
need_python
need_cmd /usr/bin/time time
need_cmd age age
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
B9="$(dirname "$HAVEN")/b9_capture_bench"
[ -x "$B9" ] || fail "$B9 is missing (built with libbenchmark-dev installed)"

export HAVEN_BENCH_DIR="$W/bench"
CMD_TIMEOUT=240
run_ok timeout -k 10 "$CMD_TIMEOUT" python3 "$ROOT/bench/compare" --quick --rounds 1 \
  --no-results --peers restic --scrypt 1024,8,1 --haven "$HAVEN" --b9 "$B9"
cat "$OUT"
for w in B1 B2 B3 B4 B5c B5u B6 B7 B8 B9 B10 B11 B12 B13 B10c B11e; do
  assert_grep "^$w: " "$OUT" "workload $w did not run"
done
assert_grep '^  haven +median' "$OUT" "no haven times"
assert_grep '^  restic +median' "$OUT" "no restic times"
assert_grep 'haven/restic' "$OUT" "no ratio"
assert_grep '^\| B1 \|' "$OUT" "no results table"
if grep -q 'ERROR' "$OUT"; then fail "a workload failed (see above)"; fi
assert_grep 'haven stages: timings backup' "$OUT" "no HAVEN_TIMINGS stage line"
# issue 15's floors (bench/floor.cc and plain tools) beside the rows that have one
for w in B1 B2 B3 B4 B5c B5u B6 B8; do
  assert_grep "^- $w haven/floor: [0-9]" "$OUT" "no floor for $w"
done
if grep -q 'floor not timed' "$OUT"; then fail "a floor was not timed (see above)"; fi
pass "bench/compare --quick ran every workload"
