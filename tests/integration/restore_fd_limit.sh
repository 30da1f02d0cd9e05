#!/usr/bin/env bash
# Restore holds a bounded number of descriptors: a pack of 1,000 small files is restored
# under `ulimit -n 400` with every file intact (before, each restore worker kept one
# descriptor per file of its pack open until the pack was done: 608 files failed with
# "Too many open files" here, and a /usr/share restore over S3 hit EMFILE at 20,000).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../tools/lib.sh
source "$(dirname "$0")/../tools/lib.sh"
setup "$@"
need_haven
need_python

SRC="$W/src"
mkdir -p "$SRC"
for i in $(seq 1000); do echo "small file $i" >"$SRC/f$i"; done
R="$W/repo"
run_ok hv -r "$R" init --scrypt 1024,8,1
run_ok hv -r "$R" backup "$SRC"
check "restore of 1,000 files in one pack under ulimit -n 400, with 1 and 2 workers"
for jobs in 1 2; do
  T="$W/target-$jobs"
  ( ulimit -n 400; exec "$HAVEN" --cache-dir "$HAVEN_CACHE_DIR" --jobs "$jobs" -r "$R" \
      restore latest --target "$T" ) >"$W/restore-$jobs.out" 2>&1 \
    || { cat "$W/restore-$jobs.out"; fail "restore --jobs $jobs failed under ulimit -n 400"; }
  if grep -q "Too many open files" "$W/restore-$jobs.out"; then
    cat "$W/restore-$jobs.out"; fail "restore --jobs $jobs ran out of descriptors"
  fi
  compare_trees "$SRC" "$T$SRC"
done
pass
