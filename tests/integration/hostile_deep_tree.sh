#!/usr/bin/env bash
# A hostile repository whose snapshot is one chain of 50,000 nested directories (made by
# `haven debug gen-deep`; a real file system cannot hold it below PATH_MAX, a crafted
# repository can). Every command that walks trees by recursion (ls, dump, find, diff,
# stats, rewrite, repair snapshots, copy's re-chunk) must stop at 4,096 levels
# with a clear error naming the tree, not overflow its stack (before kMaxTreeDepth was
# shared by all of them, ls, dump, stats and repair snapshots died of SIGSEGV here and
# find ran for minutes); the walkers that keep a queue instead of a stack (check, stats
# raw-data, recover, prune's used-blob walk, copy without re-chunking) finish normally.
# (restore stops at the same limit with a warning and goes on: HostileTreeTest in the unit
# tests; not repeated here, a 4,096-level restore takes a minute.)
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../tools/lib.sh
source "$(dirname "$0")/../tools/lib.sh"
setup "$@"
need_haven

REPO="$W/repo"
DEEP='nested deeper than 4096 levels'
run_ok hv -r "$REPO" init
run_ok hv -r "$REPO" debug gen-deep --depth 50000
S1=$(sed -n 's/^snapshot \([0-9a-f]*\) saved$/\1/p' "$W/out")
run_ok hv -r "$REPO" debug gen-deep --depth 50001
S2=$(sed -n 's/^snapshot \([0-9a-f]*\) saved$/\1/p' "$W/out")
[ -n "$S1" ] && [ -n "$S2" ] || fail "gen-deep printed no snapshot id"

# refused CMD...: exit 1 (kCorrupt), the depth named on stderr, no signal.
refused() {
  expect_exit 1 "$@"
  assert_grep "the tree at \"/d/d/d.*\" is $DEEP" "$W/err" "$*: no depth error"
  check "refused: $*"
}

refused hv -r "$REPO" ls "$S1"
refused hv -r "$REPO" ls -l --recursive "$S1" /d
refused hv -r "$REPO" dump "$S1" /
refused hv -r "$REPO" find leaf
refused hv -r "$REPO" diff "$S1" "$S2"
refused hv -r "$REPO" stats "$S1"
refused hv -r "$REPO" stats --mode files-by-contents "$S1"
refused hv -r "$REPO" rewrite --exclude /nothing --dry-run "$S1"
refused hv -r "$REPO" repair snapshots --dry-run

# Walkers with a queue finish.
run_ok hv -r "$REPO" check
assert_grep "no errors were found" "$W/out"
run_ok hv -r "$REPO" stats --mode raw-data
run_ok hv -r "$REPO" recover
check "check, stats raw-data and recover walk all 50,001 levels"

# copy: into a repository with other chunker parameters the files are re-chunked (a
# recursive walk: refused, nothing written); with --no-rechunk blobs are copied as they are.
printf '%s\n' "$RESTIC_PASSWORD" >"$W/pw"
run_ok hv -r "$W/other" init
expect_exit 1 hv -r "$W/other" copy --from-repo "$REPO" --from-password-file "$W/pw" "$S1"
assert_grep "$DEEP" "$W/err" "copy: no depth error"
run_ok hv -r "$W/other" snapshots --json
[ "$(tr -d '[:space:]' <"$W/out")" = "[]" ] || fail "copy wrote a snapshot of a refused tree"
run_ok hv -r "$W/other" copy --no-rechunk --from-repo "$REPO" --from-password-file "$W/pw" "$S1"
run_ok hv -r "$W/other" check
check "copy refuses to re-chunk the chain, copies it blob for blob with --no-rechunk"

# prune's used-blob walk over both chains.
run_ok hv -r "$REPO" forget --keep-last 1 --prune
run_ok hv -r "$REPO" check
check "forget --prune walks the chain"
pass
