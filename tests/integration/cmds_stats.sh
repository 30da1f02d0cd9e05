#!/usr/bin/env bash
# stats: haven and restic 0.14 give the same numbers, text and --json, in all four counting
# modes, for all snapshots, one, several (with latest), and those of a host or tag, on the
# same repository (tests/tools/cmds_repo.sh: five snapshots of a changing tree with a hard
# link, repeated content and empty directories, one written by haven). An unknown mode and
# an unknown id behave as in restic.
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

check "every mode and selection: same text and JSON as restic"
for m in restore-size files-by-contents blobs-per-file raw-data; do
  same_output "stats --mode $m" -r "$REPO" stats --mode "$m"
  same_output "stats --json --mode $m" -r "$REPO" --json stats --mode "$m"
  same_output "stats --mode $m ID" -r "$REPO" stats --mode "$m" "${SNAP2:0:8}"
  same_output "stats --mode $m latest ID" -r "$REPO" --json stats --mode "$m" latest "$SNAP3" "$SNAP3"
  same_output "stats --mode $m --host" -r "$REPO" stats --mode "$m" --host h2
  same_output "stats --mode $m --tag" -r "$REPO" --json stats --mode "$m" --tag t2
done
same_output "stats default mode" -r "$REPO" stats
run_ok hv -r "$REPO" stats --mode raw-data
assert_grep '^   Total Blob Count:   [1-9][0-9]*$' "$OUT"
run_ok hv -r "$REPO" --json stats --mode restore-size "$SNAP1"
assert_grep '"total_file_count":[1-9]' "$OUT"

check "bad input"
same_output "stats unknown mode" -r "$REPO" stats --mode bogus
expect_exit 1 hv -r "$REPO" stats --mode bogus
assert_grep 'unknown counting mode: bogus' "$ERR"
same_output "stats unknown id" -r "$REPO" stats ffffffff
pass
