#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan) and runs each for a while.
#
#   tests/fuzz/run-libfuzzer.sh [SECONDS_PER_TARGET] [TARGET...]
#
# SECONDS_PER_TARGET defaults to 60; TARGET names are e.g. pack, tree (default: all
# src/**/*_fuzz.cc). Environment: FUZZ_BUILD (build dir, default build-fuzz), FUZZ_JOBS
# (targets run at the same time, default 1). New inputs go to $FUZZ_BUILD/fuzz-work/<t>/;
# crashes are saved as $FUZZ_BUILD/fuzz-work/<t>-crash-*; logs in $FUZZ_BUILD/fuzz-work/<t>.log.
# Exit status 1 if any target found a crash, leak or timeout.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
secs=${1:-60}
shift || true
build=${FUZZ_BUILD:-$root/build-fuzz}
jobs=${FUZZ_JOBS:-1}
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  while IFS= read -r f; do
    n=$(basename "$f" .cc)
    targets+=("${n%_fuzz}")
  done < <(find "$root/src" -name '*_fuzz.cc' | sort)
fi
command -v clang++ >/dev/null || {
  echo "clang++ not found: apt-get install -y clang libclang-rt-14-dev" >&2
  exit 2
}
CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DHAVEN_FUZZ=ON >/dev/null
ninja -C "$build" $(printf 'fuzz_%s ' "${targets[@]}")
work=$build/fuzz-work
mkdir -p "$work"

run_one() {
  local t=$1
  mkdir -p "$work/$t"
  rm -f "$work/$t"-crash-* "$work/$t"-leak-* "$work/$t"-timeout-* "$work/$t"-oom-*
  if "$build/fuzz_$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
      -print_final_stats=1 -artifact_prefix="$work/$t-" \
      "$work/$t" "$root/tests/fuzz/corpus/$t" >"$work/$t.log" 2>&1; then
    echo "fuzz_$t: ok, $(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$work/$t.log" | grep -Eo '[0-9]+$') runs, corpus $(ls "$work/$t" | wc -l) files"
  else
    echo "fuzz_$t: FAILED, see $work/$t.log and $(ls "$work/$t"-* 2>/dev/null | tr '\n' ' ')"
    return 1
  fi
}

status=0
pids=()
for t in "${targets[@]}"; do
  run_one "$t" &
  pids+=($!)
  if [ ${#pids[@]} -ge "$jobs" ]; then
    wait "${pids[0]}" || status=1
    pids=("${pids[@]:1}")
  fi
done
for p in "${pids[@]}"; do wait "$p" || status=1; done
exit $status
