#!/usr/bin/env bash
# rewrite (restic 0.15's command, run on a restic 0.14 repository; restic 0.14 judges the
# result): on the five-snapshot repository of tests/tools/cmds_repo.sh
#  * `rewrite -e '*.bin' --iexclude 'S1*' ID`: a new snapshot whose `restic ls` is the old
#    one's without exactly the excluded paths and everything below them, every other field
#    the old snapshot's, `original` the old id, the tag "rewrite" added; restic check
#    --read-data passes; the "excluding" lines name the excluded paths;
#  * --exclude-file, several snapshots by --host, --forget (old snapshots gone, no tag);
#  * --dry-run writes nothing (not even a lock); an exclude that matches nothing changes
#    nothing; no exclude at all is refused (exit 1).
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
repo_state() { (cd "$REPO" && find . -type f | LC_ALL=C sort | xargs sha256sum); }

# ls_minus OLD NEW GLOB...: `restic ls --json NEW` equals OLD's nodes without those whose
# name matches one of the globs (case-insensitively for a glob prefixed "i:") and their
# descendants; the excluded paths are written to $W/excluded.
ls_minus() {
  local old="$1" new="$2"; shift 2
  r -r "$REPO" ls --json "$old" >"$W/ls.old"
  r -r "$REPO" ls --json "$new" >"$W/ls.new"
  python3 - "$W/ls.old" "$W/ls.new" "$W/excluded" "$@" <<'PY'
import fnmatch, json, sys
old, new, out, globs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
def nodes(f):
    return [json.loads(l) for l in open(f) if '"struct_type":"node"' in l]
def hit(name):
    for g in globs:
        if g.startswith("i:") and fnmatch.fnmatchcase(name.lower(), g[2:].lower()): return True
        if not g.startswith("i:") and fnmatch.fnmatchcase(name, g): return True
    return False
excluded, keep = [], []
for n in nodes(old):
    p = n["path"]
    if hit(n["name"]) or any(p.startswith(e + "/") for e in excluded):
        if not any(p.startswith(e + "/") for e in excluded): excluded.append(p)
        continue
    keep.append(n)
got = nodes(new)
if got != keep:
    print("expected:", *[k["path"] for k in keep], sep="\n  ")
    print("got:", *[k["path"] for k in got], sep="\n  ")
    sys.exit(1)
open(out, "w").write("".join("excluding %s\n" % e for e in excluded))
if not excluded: sys.exit("nothing was excluded: the test proves nothing")
PY
}

# snapshot_json ID: the snapshot's stored fields.
snapshot_json() { hv -r "$REPO" cat snapshot "$1"; }
new_snapshot() { grep -o 'saved new snapshot [0-9a-f]*' "$1" | awk '{print $4}' | tail -n1; }

check "rewrite one snapshot: restic sees the old tree minus the excluded paths"
run_ok hv -r "$REPO" rewrite -e '*.bin' --iexclude 'S1*' "${SNAP2:0:8}"
assert_grep '^modified 1 snapshots$' "$OUT"
NEW=$(new_snapshot "$OUT")
[ -n "$NEW" ] || fail "no new snapshot reported"
ls_minus "$SNAP2" "$NEW" '*.bin' 'i:S1*'
grep '^excluding ' "$OUT" >"$W/excluding.h"
cmp -s "$W/excluded" "$W/excluding.h" || { diff "$W/excluded" "$W/excluding.h" >&2; fail "excluding lines differ"; }
snapshot_json "$SNAP2" >"$W/old.json"
snapshot_json "$NEW" >"$W/new.json"
python3 - "$W/old.json" "$W/new.json" "$SNAP2" <<'PY'
import json, sys
old, new, oid = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
assert new["original"] == oid, new
assert new["tags"] == old.get("tags", []) + ["rewrite"], new["tags"]
assert new["tree"] != old["tree"]
for k in set(old) | set(new):
    if k not in ("tree", "tags", "original"):
        assert old.get(k) == new.get(k), (k, old.get(k), new.get(k))
PY
run_ok r -r "$REPO" check --read-data
run_ok r -r "$REPO" snapshots "$SNAP2"

check "--dry-run: nothing written, no lock"
repo_state >"$W/state.before"
run_ok hv -r "$REPO" rewrite --dry-run -e '*.txt' "$SNAP3"
assert_grep '^would save new snapshot$' "$OUT"
assert_grep '^would modify 1 snapshots$' "$OUT"
repo_state >"$W/state.after"
cmp -s "$W/state.before" "$W/state.after" || fail "--dry-run changed the repository"

check "nothing matches: no snapshot modified"
run_ok hv -r "$REPO" rewrite -e 'no-such-name' "$SNAP3" "$SNAP4"
assert_grep '^no snapshots were modified$' "$OUT"
repo_state >"$W/state.after2"
diff <(grep -v ' ./locks/' "$W/state.before") <(grep -v ' ./locks/' "$W/state.after2") >/dev/null \
  || fail "an unmatched exclude changed the repository"

check "--exclude-file, --host, --forget"
printf '# comment\n\nthird.txt\n%s/new\n' "$W/src" >"$W/excludes"
run_ok hv -r "$REPO" rewrite --exclude-file "$W/excludes" --host h2 --forget
assert_grep '^create exclusive lock for repository$' "$OUT"
assert_grep '^modified 2 snapshots$' "$OUT"
assert_grep "^removed old snapshot ${SNAP3:0:8}$" "$OUT"
r -r "$REPO" snapshots --json >"$W/snaps.json"
python3 - "$W/snaps.json" "$SNAP3" "$SNAP4" <<'PY'
import json, sys
snaps = json.load(open(sys.argv[1]))
ids = {s["id"] for s in snaps}
assert sys.argv[2] not in ids and sys.argv[3] not in ids, "old snapshots still there"
h2 = [s for s in snaps if s["hostname"] == "h2"]
assert len(h2) == 2, h2
for s in h2:
    assert s["original"] in (sys.argv[2], sys.argv[3]), s
    assert "rewrite" not in (s.get("tags") or []), s
PY
for s in $(python3 -c 'import json,sys; print(" ".join(s["id"] for s in json.load(open(sys.argv[1])) if s["hostname"]=="h2"))' "$W/snaps.json"); do
  r -r "$REPO" ls "$s" >"$W/ls.h2"
  if grep -Eq '/third\.txt$|/new($|/)' "$W/ls.h2"; then fail "excluded path still in $s"; fi
done
run_ok r -r "$REPO" check --read-data
run_ok hv -r "$REPO" check --read-data

check "bad input"
expect_exit 1 hv -r "$REPO" rewrite "$SNAP1"
assert_grep 'Nothing to do: no excludes provided' "$ERR"
expect_exit 1 hv -r "$REPO" rewrite -e x --exclude-file "$W/no-such-file"
run_ok hv -r "$REPO" rewrite -e x ffffffff
assert_grep 'no snapshots were modified' "$OUT"
assert_grep 'Ignoring "ffffffff"' "$ERR"
pass
