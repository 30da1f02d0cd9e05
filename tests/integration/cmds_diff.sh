#!/usr/bin/env bash
# diff: haven and restic 0.14 print the same changes and statistics (text and --json, with
# and without --metadata) for every ordered pair of five snapshots of a tree that changes
# between them (tests/tools/cmds_repo.sh: adds, removals, modifications, type changes,
# chmod, empty directories, content shared with unchanged directories; one snapshot
# written by haven). Bad input: a wrong number of arguments, an unknown id and an
# ambiguous prefix fail with restic's exit code (1).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../tools/lib.sh
source "$(dirname "$0")/../tools/lib.sh"
setup "$@"
need_restic
need_haven
need_python
# shellcheck source=../tools/cmds_repo.sh
source "$TOOLS/cmds_repo.sh"

REPO="$W/repo"
build_cmds_repo "$REPO" "$W/src"

check "every ordered pair of snapshots: same text and JSON as restic"
n=0
for a in "${SNAPS[@]}"; do
  for b in "${SNAPS[@]}"; do
    for m in "" "--metadata"; do
      # shellcheck disable=SC2086
      same_output "diff $m ${a:0:8} ${b:0:8}" -r "$REPO" diff $m "${a:0:8}" "${b:0:8}"
      # shellcheck disable=SC2086
      same_output "diff --json $m" -r "$REPO" --json diff $m "$a" "${b:0:10}"
      n=$((n + 2))
    done
  done
done
log "$n comparisons identical"
run_ok hv -r "$REPO" diff "$SNAP1" "$SNAP2"
assert_grep '^M    .*/a/f1$' "$OUT"
assert_grep '^T    .*/d$' "$OUT"
assert_grep '^\+    .*/new/empty3/$' "$OUT"
assert_grep '^Files: +[0-9]+ new' "$OUT"

check "quiet: no change lines, the statistics stay (as restic)"
same_output "diff -q" -r "$REPO" -q diff "$SNAP1" "$SNAP3"

check "bad input"
expect_exit 1 hv -r "$REPO" diff "$SNAP1"
assert_grep 'specify two snapshot IDs' "$ERR"
expect_exit 1 r -r "$REPO" diff "$SNAP1"
expect_exit 1 hv -r "$REPO" diff "$SNAP1" "$SNAP2" "$SNAP3"
expect_exit 1 hv -r "$REPO" diff "$SNAP1" ffffffff
assert_grep 'ffffffff' "$ERR"
expect_exit 1 r -r "$REPO" diff "$SNAP1" ffffffff
# an ambiguous prefix: the one-character prefix shared by most snapshots
amb=$(printf '%s\n' "${SNAPS[@]}" | cut -c1 | sort | uniq -d | head -n1)
if [ -n "$amb" ]; then
  expect_exit 1 hv -r "$REPO" diff "$amb" "$SNAP1"
  assert_grep 'ambiguous' "$ERR"
  expect_exit 1 r -r "$REPO" diff "$amb" "$SNAP1"
else
  log "no two snapshot ids share a first character: ambiguity checked in unit tests"
fi
pass
