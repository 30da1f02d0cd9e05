#!/usr/bin/env bash
# The data-losing bugs of the drop-in and reliability issues, through the command line:
#   A. an option takes exactly one value: `backup /a --exclude '*.o' /b` backs up /b,
#      `--tag daily /b` too; list options of snapshots, forget, restore, ls leave the
#      positional arguments after them alone (restic's parsing)
#   B. a missing source path is skipped with "does not exist, skipping", the rest is saved,
#      exit 3; every path missing: exit 1, no snapshot
#   C. restore --target whose parents do not exist creates them
#   D. `backup lnk/file` with lnk a symlink to a directory stores the file (lnk becomes a
#      directory node, as restic stores it; restic's ls of both snapshots agree)
#   E. a restore onto a target where an earlier restore left a symlink (a -> outside) and
#      the snapshot has a directory `a` writes inside the target, never through the link
#   F. one damaged snapshot file: snapshots, ls, dump, restore, find-parent backup and
#      forget skip it with a warning naming it; check reports it; prune refuses (it cannot
#      know what the damaged one uses); repair snapshots --forget removes it; then prune,
#      haven check and restic check --read-data are clean (--no-cache: the cache's copy
#      of the snapshot is intact)
#   G. --json output a script parses: an unreadable file during backup (as uid 65534) is a
#      {"message_type":"error","error":{"message"},"during":"archival","item"} line on
#      stderr, and a fatal error is restic 0.17's {"message_type":"exit_error"} line
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../tools/lib.sh
source "$(dirname "$0")/../tools/lib.sh"
setup "$@"
need_restic
need_haven
need_python

R="$W/repo"
run_ok hv -r "$R" init
mkdir -p "$W/a" "$W/b"
echo keep >"$W/a/keep.txt"
echo object >"$W/a/x.o"
echo bee >"$W/b/bee.txt"

# snapshot_field ID FIELD: a field of `snapshots --json` for one snapshot, as JSON.
snapshot_field() {
  run_ok hv -r "$R" snapshots --json
  python3 - "$OUT" "$1" "$2" <<'PY'
import json, sys
for s in json.load(open(sys.argv[1])):
    if s["id"].startswith(sys.argv[2]):
        print(json.dumps(s.get(sys.argv[3])))
PY
}
# summary FILE: the summary line of a `backup --json` run.
summary() { grep '"message_type":"summary"' "$1" | tail -n 1; }
snapshot_id() { summary "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["snapshot_id"])'; }
count_snapshots() { ls "$R/snapshots" | wc -l; }

# ---------------------------------------------------------------------------------------
check "A. one value per option"
run_ok hv -r "$R" --json backup "$W/a" --exclude '*.o' "$W/b"
S1=$(snapshot_id "$OUT")
[ "$(snapshot_field "$S1" paths)" = "[\"$W/a\", \"$W/b\"]" ] \
  || fail "A: --exclude swallowed a path: paths $(snapshot_field "$S1" paths)"
[ "$(snapshot_field "$S1" excludes)" = '["*.o"]' ] || fail "A: excludes $(snapshot_field "$S1" excludes)"
run_ok hv -r "$R" ls "$S1"
assert_grep "^$W/b/bee.txt\$" "$OUT" "A: b/bee.txt is not in the snapshot"
if grep -q 'x\.o$' "$OUT"; then fail "A: the exclude pattern was not applied"; fi

run_ok hv -r "$R" --json backup "$W/a" --tag daily "$W/b" --tag x,y
S2=$(snapshot_id "$OUT")
[ "$(snapshot_field "$S2" tags)" = '["daily", "x", "y"]' ] || fail "A: tags $(snapshot_field "$S2" tags)"
[ "$(snapshot_field "$S2" paths)" = "[\"$W/a\", \"$W/b\"]" ] || fail "A: --tag swallowed a path"
run_ok hv -r "$R" --json backup -e '*.o' "$W/b" --tag daily "$W/a"
S3=$(snapshot_id "$OUT")
[ "$(snapshot_field "$S3" paths)" = "[\"$W/a\", \"$W/b\"]" ] || fail "A: -e/--tag swallowed a path"

# snapshots --tag daily ID: only that snapshot (the id is not taken as a second tag)
run_ok hv -r "$R" snapshots --json --tag daily "$S2"
[ "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$OUT")" = 1 ] \
  || fail "A: snapshots --tag daily ID listed more than ID"
run_ok hv -r "$R" snapshots --json --path "$W/a" --host "$(hostname)" "$S3"
[ "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$OUT")" = 1 ] \
  || fail "A: snapshots --path P --host H ID listed more than ID"
# ls --tag daily SNAPSHOT (the snapshot is not swallowed)
run_ok hv -r "$R" ls --tag daily latest
assert_grep "^$W/b/bee.txt\$" "$OUT" "A: ls --tag daily latest"
# restore --include P SNAPSHOT --target T
run_ok hv -r "$R" restore --include "$W/b" "$S2" --target "$W/restore-a"
[ -f "$W/restore-a/$W/b/bee.txt" ] && [ ! -e "$W/restore-a/$W/a" ] || fail "A: restore --include"
run_ok hv -r "$R" restore --exclude "$W/b" "$S2" --exclude '*.o' --target "$W/restore-b"
[ -f "$W/restore-b/$W/a/keep.txt" ] && [ ! -e "$W/restore-b/$W/b" ] || fail "A: restore --exclude"
# forget --tag daily ID: forgets exactly ID (old parsing took ID as a tag and forgot nothing)
run_ok hv -r "$R" forget --tag daily "$S3"
[ "$(count_snapshots)" = 2 ] || fail "A: forget --tag daily ID did not forget ID"
[ ! -e "$R/snapshots/$S3" ] || fail "A: forget removed the wrong snapshot"
# forget --keep-tag T --keep-last 1 (both policies apply; nothing swallowed)
run_ok hv -r "$R" forget --dry-run --json --keep-tag daily --keep-last 1 --path "$W/a"
python3 - "$OUT" "$S2" <<'PY' || fail "A: forget --keep-tag daily --keep-last 1"
import json, sys
groups = json.load(open(sys.argv[1]))
keep = [s["id"] for g in groups for s in g["keep"]]
assert sys.argv[2] in keep, keep
PY

# ---------------------------------------------------------------------------------------
check "B. missing source paths"
before=$(count_snapshots)
expect_exit 3 hv -r "$R" --json backup "$W/a" "$W/missing-1" "$W/b"
assert_grep "$W/missing-1 does not exist, skipping" "$ERR" "B: no warning naming the missing path"
SB=$(snapshot_id "$OUT")
[ "$(snapshot_field "$SB" paths)" = "[\"$W/a\", \"$W/b\"]" ] || fail "B: paths $(snapshot_field "$SB" paths)"
[ "$(count_snapshots)" = $((before + 1)) ] || fail "B: no snapshot saved"
expect_exit 1 hv -r "$R" backup "$W/missing-1" "$W/missing-2"
assert_grep "do not exist" "$ERR" "B: no clear message when every path is missing"
[ "$(count_snapshots)" = $((before + 1)) ] || fail "B: a snapshot was saved with every path missing"

# ---------------------------------------------------------------------------------------
check "C. restore --target with missing parents"
run_ok hv -r "$R" restore "$SB" --target "$W/new/deeper/target"
[ "$(cat "$W/new/deeper/target/$W/b/bee.txt")" = bee ] || fail "C: not restored"

# ---------------------------------------------------------------------------------------
check "D. a symlinked directory above the target"
mkdir -p "$W/real/sub"
echo through >"$W/real/file"
echo deeper >"$W/real/sub/deep"
ln -s real "$W/lnk"
run_ok hv -r "$R" --json backup "$W/lnk/file" "$W/lnk/sub"
SD=$(snapshot_id "$OUT")
summary "$OUT" | python3 -c 'import json,sys; s=json.load(sys.stdin); assert s["total_files_processed"]==2, s' \
  || fail "D: not every file was processed"
run_ok hv -r "$R" ls "$SD"
grep -v '^snapshot ' "$OUT" >"$W/haven-ls"
assert_grep "^$W/lnk/file\$" "$W/haven-ls" "D: lnk/file is not in the snapshot"
assert_grep "^$W/lnk/sub/deep\$" "$W/haven-ls" "D: lnk/sub/deep is not in the snapshot"
run_ok hv -r "$R" restore "$SD" --target "$W/restore-d"
[ "$(cat "$W/restore-d/$W/lnk/file")" = through ] || fail "D: restored content"
[ -d "$W/restore-d/$W/lnk" ] && [ ! -L "$W/restore-d/$W/lnk" ] || fail "D: lnk is not a directory"
# restic stores the same paths for the same arguments
run_ok r -r "$R" backup "$W/lnk/file" "$W/lnk/sub"
run_ok r -r "$R" ls latest
grep -v '^snapshot ' "$OUT" >"$W/restic-ls"
diff "$W/restic-ls" "$W/haven-ls" || fail "D: haven's and restic's snapshots of lnk/file differ"
run_ok r -r "$R" ls "$SD"

# ---------------------------------------------------------------------------------------
check "E. a link left in the target by an earlier restore is not followed"
mkdir -p "$W/outside" "$W/e"
ln -s "$W/outside" "$W/e/a"
run_ok hv -r "$R" --json backup "$W/e"
SE1=$(snapshot_id "$OUT")
rm "$W/e/a"
mkdir "$W/e/a"
echo inside >"$W/e/a/pwned"
run_ok hv -r "$R" --json backup "$W/e"
SE2=$(snapshot_id "$OUT")
run_ok hv -r "$R" restore "$SE1" --target "$W/restore-e"
[ -L "$W/restore-e/$W/e/a" ] || fail "E: the first snapshot's link was not restored"
run_ok hv -r "$R" restore "$SE2" --target "$W/restore-e"
[ -z "$(ls -A "$W/outside")" ] || fail "E: restore wrote outside the target: $(ls -A "$W/outside")"
[ -d "$W/restore-e/$W/e/a" ] && [ ! -L "$W/restore-e/$W/e/a" ] || fail "E: a is not a directory"
[ "$(cat "$W/restore-e/$W/e/a/pwned")" = inside ] || fail "E: a/pwned not restored"
assert_grep "replaced symlink" "$ERR" "E: the replaced link is not reported"

# ---------------------------------------------------------------------------------------
check "F. one damaged snapshot file"
run_ok hv -r "$R" snapshots --json
mapfile -t IDS < <(python3 -c 'import json,sys; [print(s["id"]) for s in json.load(open(sys.argv[1]))]' "$OUT")
BAD="$SB"
python3 - "$R/snapshots/$BAD" <<'PY'
import sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
b[len(b) // 2] ^= 0x20
open(p, "wb").write(bytes(b))
PY
# The local cache holds an intact copy of every snapshot file (as restic's does): the damage
# is in the repository, so these commands read it without the cache.
short=${BAD:0:8}
run_ok hv --no-cache -r "$R" snapshots
assert_grep "Ignoring snapshot $short" "$ERR" "F: snapshots does not name the damaged snapshot"
assert_grep "${S2:0:8}" "$OUT" "F: snapshots lost the intact ones"
run_ok hv --no-cache -r "$R" ls "$S2"
run_ok hv --no-cache -r "$R" dump "$S2" "$W/b/bee.txt"
[ "$(cat "$OUT")" = bee ] || fail "F: dump"
run_ok hv --no-cache -r "$R" restore "$S2" --target "$W/restore-f"
run_ok hv --no-cache -r "$R" restore latest --target "$W/restore-f2"
run_ok hv --no-cache -r "$R" backup "$W/a"
run_ok hv --no-cache -r "$R" forget --keep-last 100
expect_exit 1 hv --no-cache -r "$R" check
cat "$OUT" "$ERR" >"$W/check-f"
assert_grep "$BAD" "$W/check-f" "F: check does not name the damaged snapshot"
packs_before=$(find "$R/data" -type f | wc -l)
expect_exit 1 hv --no-cache -r "$R" prune
assert_grep "$BAD" "$ERR" "F: prune's refusal does not name the damaged snapshot"
assert_grep "repair snapshots --forget" "$ERR" "F: prune does not say how to go on"
[ "$(find "$R/data" -type f | wc -l)" = "$packs_before" ] || fail "F: prune deleted packs"
run_ok hv --no-cache -r "$R" repair snapshots --forget
assert_grep "$short" "$ERR" "F: repair snapshots --forget does not name what it removed"
[ ! -e "$R/snapshots/$BAD" ] || fail "F: repair snapshots --forget left the damaged snapshot"
run_ok hv -r "$R" check
run_ok hv -r "$R" prune
run_ok hv -r "$R" check --read-data
run_ok r -r "$R" check --read-data

# ---------------------------------------------------------------------------------------
check "G. JSON errors"
need_cmd setpriv util-linux
N="$W/nobody"
mkdir -p "$N/src"
chmod 0711 "$W"
echo ok >"$N/src/ok"
echo secret >"$N/src/secret"
chown -R 65534:65534 "$N"
chown 0:0 "$N/src/secret"
chmod 0600 "$N/src/secret"
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$N" "$@"; }
run_ok as_nobody "$HAVEN" --cache-dir "$N/cache" -r "$N/repo" init --scrypt 1024,8,1
expect_exit 3 as_nobody "$HAVEN" --cache-dir "$N/cache" -r "$N/repo" --json backup "$N/src"
python3 - "$ERR" "$N/src/secret" <<'PY' || fail "G: no JSON error object for the unreadable file"
import json, sys
errors = []
for line in open(sys.argv[1]):
    line = line.strip()
    if line.startswith("{"):
        m = json.loads(line)
        if m.get("message_type") == "error":
            errors.append(m)
assert len(errors) == 1, errors
e = errors[0]
assert e["item"] == sys.argv[2] and e["during"] == "archival", e
assert "ermission denied" in e["error"]["message"], e
PY
summary "$OUT" >/dev/null || fail "G: no summary line on stdout"
expect_exit 10 hv -r "$W/no-such-repo" --json snapshots
python3 -c 'import json,sys; m=json.loads(open(sys.argv[1]).read()); assert m["message_type"]=="exit_error" and m["code"]==10 and "does not exist" in m["message"], m' "$ERR" \
  || fail "G: a fatal error with --json is not an exit_error object: $(cat "$ERR")"

pass
