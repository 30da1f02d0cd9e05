#!/usr/bin/env bash
# Restore into a target that already holds files (RELIABILITY.md case 25):
#   A. a restore killed with SIGKILL part-way, run again (default --overwrite always): the
#      target ends identical to the source (every metadata kind of make_tree), the re-run
#      reports the content already in place and does not fetch it again, and a third run
#      finds everything in place
#   B. --overwrite if-changed keeps files whose size and mtime match, and still repairs a
#      half-written file (its mtime is not the snapshot's)
#   C. --overwrite never keeps a user's edit; if-newer keeps a newer file and replaces an
#      older one; a symlink planted where a file belongs is replaced, never written through
#   D. a bad --overwrite value: exit 1 naming the accepted values
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../tools/lib.sh
source "$(dirname "$0")/../tools/lib.sh"
setup "$@"
need_haven
need_python

SRC="$W/src"
make_tree "$SRC"
gen_bytes 7 48000000 >"$SRC/large.bin"
R="$W/repo"
run_ok hv -r "$R" init --scrypt 1024,8,1
run_ok hv -r "$R" backup "$SRC"
T="$W/target"

# ---------------------------------------------------------------------------------------
check "A. a killed restore, resumed"
# 8 MiB/s: the 48 MB file alone takes about 6 s, the kill comes after 2.
( exec "$HAVEN" --cache-dir "$HAVEN_CACHE_DIR" --limit-download 8192 -r "$R" \
    restore latest --target "$T" >"$W/killed.out" 2>&1 ) & P=$!
bg_track "$P"
sleep 2
kill -9 "$P" 2>/dev/null || fail "A: the restore ended before it could be killed"
wait "$P" 2>/dev/null || true
[ -e "$T$SRC" ] || fail "A: nothing was restored before the kill"
run_ok hv -r "$R" restore latest --target "$T" -v
assert_grep "already in place" "$OUT" "A: the re-run does not report the content already in place"
compare_trees "$SRC" "$T$SRC"
run_ok hv -r "$R" restore latest --target "$T" -v --json
python3 - "$OUT" <<'PY' || fail "A: a third run rewrote content"
import json, sys
s = [json.loads(l) for l in open(sys.argv[1]) if '"summary"' in l][-1]
# Only make_tree's small hard-linked files are written again (a file with several links is
# replaced, never written through).
assert 0 <= s["total_bytes"] - s["bytes_skipped"] < 4096, s
PY

# ---------------------------------------------------------------------------------------
check "B. --overwrite if-changed"
python3 - "$T$SRC/large.bin" <<'PY'
import os, sys
p = sys.argv[1]
st = os.stat(p)
with open(p, "r+b") as f:      # a half-written file: right size, zeros at the end
    f.seek(st.st_size // 2)
    f.write(b"\0" * (st.st_size - st.st_size // 2))
PY
run_ok hv -r "$R" restore latest --target "$T" --overwrite if-changed -v
compare_trees "$SRC" "$T$SRC"

# ---------------------------------------------------------------------------------------
check "C. --overwrite never and if-newer; a planted symlink"
F=$(cd "$SRC" && find . -type f -size -100k -links 1 | LC_ALL=C sort | head -2)
F1=$(sed -n 1p <<<"$F"); F2=$(sed -n 2p <<<"$F")
[ -n "$F1" ] && [ -n "$F2" ] || fail "C: make_tree has no two small files"
echo "edited" >"$T$SRC/$F1"
run_ok hv -r "$R" restore latest --target "$T" --overwrite never
[ "$(cat "$T$SRC/$F1")" = edited ] || fail "C: never overwrote an edited file"
touch -d '2100-01-01' "$T$SRC/$F1"
echo "old" >"$T$SRC/$F2"; touch -d '1971-01-01' "$T$SRC/$F2"
run_ok hv -r "$R" restore latest --target "$T" --overwrite if-newer
[ "$(cat "$T$SRC/$F1")" = edited ] || fail "C: if-newer replaced a newer file"
cmp -s "$SRC/$F2" "$T$SRC/$F2" || fail "C: if-newer kept an older file"
echo "outside" >"$W/outside"
rm -f "$T$SRC/$F1"; ln -s "$W/outside" "$T$SRC/$F1"
run_ok hv -r "$R" restore latest --target "$T"
[ "$(cat "$W/outside")" = outside ] || fail "C: restore wrote through a planted symlink"
compare_trees "$SRC" "$T$SRC"

# ---------------------------------------------------------------------------------------
check "D. a bad --overwrite value"
expect_exit 1 hv -r "$R" restore latest --target "$T" --overwrite sometimes
assert_grep "always|if-changed|if-newer|never" "$ERR" "D: the accepted values are not named"

pass
