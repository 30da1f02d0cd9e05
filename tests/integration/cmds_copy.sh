#!/usr/bin/env bash
# copy: restic 0.14's copy semantics, checked against restic on the same repositories
# (source: tests/tools/cmds_repo.sh's five snapshots, one written by haven):
#  * restic copies into one fresh destination, haven into another: the same snapshots
#    (every field but the ids: no parent, `original` = the source id, the same trees), the
#    same "snapshot … of … at …" / "copy started" lines (restic prints them in its listing
#    order and adds a progress bar: compared sorted, bars dropped);
#  * a second copy skips everything, in both directions: haven recognises restic's copies
#    and restic haven's ("skipping source snapshot …, was already copied to snapshot …");
#  * restic check --read-data passes on haven's destination (v2, and a v1 one: stored
#    uncompressed), a file dumped from a copy equals the source's;
#  * a partial copy by id and by --host, then the rest;
#  * with different chunker parameters haven re-chunks: restic check --read-data passes,
#    every copy restores like its source, a backup of the same tree into the destination
#    then stores no data blob, the copies are recognised next time; --no-rechunk copies
#    the blobs as they are (restic's copy);
#  * bad input: the same repository (refused, exit 1), an unknown id (warned, skipped),
#    a source that does not exist (exit 10).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../tools/lib.sh
source "$(dirname "$0")/../tools/lib.sh"
setup "$@"
need_restic
need_haven
need_python
# shellcheck source=../tools/cmds_repo.sh
source "$TOOLS/cmds_repo.sh"

SRC="$W/repo"
build_cmds_repo "$SRC" "$W/src"
export RESTIC_FROM_PASSWORD="$RESTIC_PASSWORD"
printf '%s\n' "$RESTIC_PASSWORD" >"$W/pw"

snapshot_state() {
  r -r "$1" snapshots --json | python3 -c '
import json, sys
for s in sorted(json.load(sys.stdin), key=lambda s: s["time"]):
    s.pop("id"); s.pop("short_id")
    print(json.dumps(s, sort_keys=True))'
}
# The copy lines without restic's progress bar, with new ids masked, sorted per snapshot block.
copy_lines() {
  python3 - "$1" <<'PY'
import re, sys
blocks, cur = [], []
for line in open(sys.argv[1]):
    line = line.rstrip("\n")
    if "packs copied" in line or not line:
        continue
    line = re.sub(r"(snapshot) [0-9a-f]{8} saved", r"\1 X saved", line)
    line = re.sub(r"(copied to snapshot) [0-9a-f]{8}", r"\1 X", line)
    if line.startswith("snapshot ") and " of [" in line and cur:
        blocks.append(cur); cur = []
    cur.append(line)
if cur: blocks.append(cur)
for b in sorted(blocks): print("\n".join(b))
PY
}

# The destinations take the source's chunker parameters, so that haven copies blobs as they
# are, as restic does (with different ones haven re-chunks: the last checks below).
for d in r-dst h-dst v1-dst; do
  v=2; [ "$d" = v1-dst ] && v=1
  run_ok hv -r "$W/$d" init --scrypt 1024,8,1 --repository-version "$v" \
    --copy-chunker-params --from-repo "$SRC"
done

check "restic and haven copy everything: the same snapshots and lines"
run_ok r -r "$W/r-dst" copy --from-repo "$SRC"
copy_lines "$OUT" >"$W/lines.r"
run_ok hv -r "$W/h-dst" copy --from-repo "$SRC" --from-password-file "$W/pw"
copy_lines "$OUT" >"$W/lines.h"
cmp -s "$W/lines.r" "$W/lines.h" || { diff "$W/lines.r" "$W/lines.h" >&2; fail "copy lines differ"; }
[ "$(grep -c 'copy started' "$W/lines.h")" = 5 ] || fail "expected 5 copies"
snapshot_state "$W/r-dst" >"$W/state.r"
snapshot_state "$W/h-dst" >"$W/state.h"
cmp -s "$W/state.r" "$W/state.h" || { diff "$W/state.r" "$W/state.h" >&2; fail "copied snapshots differ"; }
if grep -q '"parent"' "$W/state.h"; then fail "a copy kept its parent"; fi
[ "$(grep -c '"original"' "$W/state.h")" = 5 ] || fail "original missing"
run_ok r -r "$W/h-dst" check --read-data
run_ok hv -r "$W/h-dst" check --read-data

check "a second copy skips everything, in both directions"
run_ok hv -r "$W/h-dst" copy --from-repo "$SRC"
[ "$(grep -c '^skipping source snapshot' "$OUT")" = 5 ] || fail "haven did not skip its own copies"
run_ok hv -r "$W/r-dst" copy --from-repo "$SRC"
[ "$(grep -c '^skipping source snapshot' "$OUT")" = 5 ] || fail "haven did not recognise restic's copies"
copy_lines "$OUT" >"$W/skip.h"
run_ok r -r "$W/h-dst" copy --from-repo "$SRC"
[ "$(grep -c '^skipping source snapshot' "$OUT")" = 5 ] || fail "restic did not recognise haven's copies"
copy_lines "$OUT" >"$W/skip.r"
cmp -s "$W/skip.r" "$W/skip.h" || { diff "$W/skip.r" "$W/skip.h" >&2; fail "skip lines differ"; }
snapshot_state "$W/h-dst" >"$W/state.h2"
cmp -s "$W/state.h" "$W/state.h2" || fail "a skipping copy changed the destination"

check "copied data reads back"
f="$W/src/c/big"
for s in "$SNAP2"; do
  r -r "$SRC" dump "$s" "$f" >"$W/big.src"
done
new=$(r -r "$W/h-dst" snapshots --json | python3 -c 'import json,sys; print([s["id"] for s in json.load(sys.stdin) if s["original"]==sys.argv[1]][0])' "$SNAP2")
r -r "$W/h-dst" dump "$new" "$f" >"$W/big.copy"
cmp "$W/big.src" "$W/big.copy" || fail "dumped file differs"

check "a v1 destination (uncompressed) and a partial copy"
run_ok hv -r "$W/v1-dst" copy --from-repo "$SRC" "${SNAP2:0:8}" ffffffff
assert_grep 'Ignoring "ffffffff"' "$ERR"
[ "$(grep -c 'copy started' "$OUT")" = 1 ] || fail "partial copy by id"
run_ok hv -r "$W/v1-dst" copy --from-repo "$SRC" --host h2
[ "$(grep -c 'copy started' "$OUT")" = 2 ] || fail "partial copy by host"
run_ok hv -r "$W/v1-dst" copy --from-repo "$SRC"
[ "$(grep -c 'copy started' "$OUT")" = 2 ] || fail "the rest"
[ "$(grep -c '^skipping' "$OUT")" = 3 ] || fail "the rest should skip three"
run_ok r -r "$W/v1-dst" check --read-data
snapshot_state "$W/v1-dst" >"$W/state.v1"
cmp -s "$W/state.h" "$W/state.v1" || { diff "$W/state.h" "$W/state.v1" >&2; fail "v1 copies differ"; }

check "different chunker parameters: haven re-chunks the files for the destination"
run_ok hv -r "$W/rc-dst" init --scrypt 1024,8,1
run_ok hv -r "$W/rc-dst" copy --from-repo "$SRC"
assert_grep 'files are re-chunked' "$OUT"
[ "$(grep -c 'copy started' "$OUT")" = 5 ] || fail "expected 5 re-chunked copies"
run_ok r -r "$W/rc-dst" check --read-data
run_ok hv -r "$W/rc-dst" check --read-data
# every copy restores (by restic) to what its source snapshot restores to
for s in "${SNAPS[@]}"; do
  c=$(r -r "$W/rc-dst" snapshots --json | python3 -c 'import json,sys; print([s["id"] for s in json.load(sys.stdin) if s["original"]==sys.argv[1]][0])' "$s")
  run_ok r -r "$SRC" restore "$s" --target "$W/rs-src/$s"
  run_ok r -r "$W/rc-dst" restore "$c" --target "$W/rs-copy/$s"
  compare_trees "$W/rs-src/$s$W/src" "$W/rs-copy/$s$W/src"
done
# the same snapshot fields as a blob-for-blob copy, all but the tree
snapshot_state "$W/rc-dst" | python3 -c 'import json,sys
for l in sys.stdin: s=json.loads(l); s.pop("tree"); print(json.dumps(s, sort_keys=True))' >"$W/state.rc"
python3 -c 'import json,sys
for l in sys.stdin: s=json.loads(l); s.pop("tree"); print(json.dumps(s, sort_keys=True))' <"$W/state.h" >"$W/state.h-notree"
cmp -s "$W/state.h-notree" "$W/state.rc" || { diff "$W/state.h-notree" "$W/state.rc" >&2; fail "re-chunked copies differ"; }
# a backup of the same tree straight into the destination finds every data blob there
run_ok hv -r "$W/rc-dst" backup --json "$W/src"
added=$(python3 -c 'import json,sys
for l in open(sys.argv[1]):
    m = json.loads(l)
    if m.get("message_type") == "summary": print(m["data_blobs"])' "$OUT")
[ "$added" = 0 ] || fail "a backup after the re-chunked copy stored $added new data blobs"
# the copies are recognised next time, and --no-rechunk is restic's copy (the source's trees)
run_ok hv -r "$W/rc-dst" copy --from-repo "$SRC"
[ "$(grep -c '^skipping source snapshot' "$OUT")" = 5 ] || fail "re-chunked copies not recognised"
run_ok hv -r "$W/nr-dst" init --scrypt 1024,8,1
run_ok hv -r "$W/nr-dst" copy --no-rechunk --from-repo "$SRC"
if grep -q 're-chunked' "$OUT"; then fail "--no-rechunk re-chunked"; fi
snapshot_state "$W/nr-dst" >"$W/state.nr"
cmp -s "$W/state.h" "$W/state.nr" || { diff "$W/state.h" "$W/state.nr" >&2; fail "--no-rechunk copies differ"; }

check "bad input"
expect_exit 1 hv -r "$SRC" copy --from-repo "$SRC"
assert_grep 'same repository' "$ERR"
expect_exit 10 hv -r "$W/h-dst" copy --from-repo "$W/nothing-here"
expect_exit 1 hv -r "$W/h-dst" copy
assert_grep 'source repository location' "$ERR"
pass
