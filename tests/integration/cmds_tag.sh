#!/usr/bin/env bash
# tag: the same sequence of `tag` commands run by restic 0.14 on one copy of a repository
# and by haven on another gives the same messages and the same snapshots (every field but
# the new ids: tags in restic's order after --remove's swap, `original` pointing at the first
# id, the old snapshot file gone); restic reads haven's result (snapshots, check), haven
# reads restic's. Refusals (nothing to do, --set with --add) and unknown ids behave alike.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../tools/lib.sh
source "$(dirname "$0")/../tools/lib.sh"
setup "$@"
need_restic
need_haven
need_python
# shellcheck source=../tools/cmds_repo.sh
source "$TOOLS/cmds_repo.sh"

build_cmds_repo "$W/repo" "$W/src"
cp -a "$W/repo" "$W/r-repo"
cp -a "$W/repo" "$W/h-repo"

# The snapshots without their ids, sorted by time, as JSON lines.
snapshot_state() {
  r -r "$1" snapshots --json | python3 -c '
import json, sys
for s in sorted(json.load(sys.stdin), key=lambda s: s["time"]):
    s.pop("id"); s.pop("short_id")
    print(json.dumps(s, sort_keys=True))'
}

step() {
  local rc_r=0 rc_h=0
  r -r "$W/r-repo" tag "$@" >"$W/tag.r" 2>"$W/tag.r.err" </dev/null || rc_r=$?
  hv -r "$W/h-repo" tag "$@" >"$W/tag.h" 2>"$W/tag.h.err" </dev/null || rc_h=$?
  [ "$rc_r" = "$rc_h" ] || { cat "$W/tag.r.err" "$W/tag.h.err" >&2; fail "tag $*: exit $rc_r (restic) vs $rc_h (haven)"; }
  cmp -s "$W/tag.r" "$W/tag.h" || { diff "$W/tag.r" "$W/tag.h" >&2; fail "tag $*: output differs"; }
  snapshot_state "$W/r-repo" >"$W/state.r"
  snapshot_state "$W/h-repo" >"$W/state.h"
  cmp -s "$W/state.r" "$W/state.h" || { diff "$W/state.r" "$W/state.h" >&2; fail "tag $*: snapshots differ"; }
  [ "$(ls "$W/r-repo/snapshots" | wc -l)" = "$(ls "$W/h-repo/snapshots" | wc -l)" ] || fail "tag $*: snapshot file counts differ"
}

check "a sequence of edits: same output and snapshots as restic"
step --add x,y "${SNAP1:0:8}"
step --remove t1 --add z "$SNAP2" "$SNAP3"
step --set a --set 'b, c' --host h2
step --set ''
step --add q latest --host h1
step --remove t2 --tag t2
step --remove a --remove c --add d
step --add t9 "${SNAP1:0:8}"        # its id changed above: ignored with a warning
assert_grep 'Ignoring' "$W/tag.h.err"
step --set only
grep -q '"original"' "$W/state.h" || fail "no original field"
[ "$(grep -c '"original"' "$W/state.h")" = 5 ] || fail "every snapshot should carry original"

check "restic reads haven's result, haven reads restic's"
run_ok r -r "$W/h-repo" check
run_ok hv -r "$W/r-repo" check
cp -a "$W/r-repo" "$W/r-repo2"
run_ok hv -r "$W/r-repo2" tag --add from-haven
run_ok r -r "$W/r-repo2" snapshots --tag from-haven
assert_grep '^5 snapshots$' "$OUT"

check "bad input"
for args in "" "--set a --add b" "--set a --remove b"; do
  # shellcheck disable=SC2086
  step $args
done
expect_exit 1 hv -r "$W/h-repo" tag
assert_grep 'nothing to do!' "$ERR"
expect_exit 1 hv -r "$W/h-repo" tag --set a --add b
assert_grep 'set and --add/--remove cannot be given at the same time' "$ERR"
pass
