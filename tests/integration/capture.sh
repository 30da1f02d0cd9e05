#!/usr/bin/env bash
# Environment capture end to end (issue 3): capture/scan/apply/packages with fake package
# managers on a PATH built here (one of them hangs, one fails), determinism of the home
# tree across --jobs, a blocked capture (byte-identical report on every run and job count,
# first line naming the lexically first offending file, nothing stored), warn mode,
# restic reading the capture (check, ls, snapshots with the scan tag), apply into another
# home (dry run first, .haven-orig kept), and packages diff against the recorded lists.
# Secrets are built here from random characters; none is real.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../tools/lib.sh
source "$(dirname "$0")/../tools/lib.sh"
setup "$@"
need_restic
need_haven
need_python

REPO="$W/repo"
export HOME="$W/home"
mkdir -p "$HOME"
run_ok hv -r "$REPO" init
# The scan version this build reports (its tag in the snapshot: haven-scan:N/...).
: >"$W/empty.txt"
run_ok hv scan "$W/empty.txt"
SCAN_VERSION=$(sed -n 's/.* with scan version \([0-9][0-9]*\):.*/\1/p' "$OUT" "$ERR" | head -1)
[ -n "$SCAN_VERSION" ] || fail "haven scan printed no scan version"
export SCAN_VERSION

rand() { LC_ALL=C tr -dc 'A-Za-z0-9' </dev/urandom | head -c "$1" || true; }
# A password value the scanner must flag: random, with a digit (a value of letters only is
# not taken for a secret, and about 2 % of 20-letter draws have no digit: a flaky test).
secret_value() { printf '%s%d' "$(rand $(($1 - 1)))" $((RANDOM % 10)); }

# ---- a home with dotfiles (two directories of small files) ----
mkdir -p "$HOME/.config/app" "$HOME/.config/nvim" "$HOME/.ssh"
for i in $(seq 1 40); do printf 'setting_%d = value %d\n' "$i" "$i" >"$HOME/.config/app/f$i.conf"; done
for i in $(seq 1 40); do printf '" vim line %d\n' "$i" >"$HOME/.config/nvim/p$i.vim"; done
printf 'alias ll="ls -l"\n' >"$HOME/.bashrc"
printf 'password = "%s"\n' "$(secret_value 20)" >"$HOME/.config/app/x.swp"  # excluded
printf 'Host example\n  User me\n' >"$HOME/.ssh/config"
chmod 700 "$HOME/.ssh"; chmod 600 "$HOME/.ssh/config"

# ---- fake package managers ----
FAKE="$W/fakebin"
mkdir -p "$FAKE"
cat >"$FAKE/dpkg-query" <<'SH'
#!/bin/sh
cat "$FAKE_DPKG_LIST"
SH
cat >"$FAKE/apt-mark" <<'SH'
#!/bin/sh
printf 'bash\njq\n'
SH
cat >"$FAKE/pip3" <<'SH'
#!/bin/sh
case "$*" in *--user*) printf 'httpie==3.2.1\n' ;; *) printf 'requests==2.28.1\nsix==1.16.0\n' ;; esac
SH
cat >"$FAKE/npm" <<'SH'
#!/bin/sh
echo "npm ERR! broken on purpose" >&2
exit 3
SH
cat >"$FAKE/flatpak" <<'SH'
#!/bin/sh
printf 'org.example.App\t1.0\tflathub\n'
SH
cat >"$FAKE/snap" <<'SH'
#!/bin/sh
exec sleep 600
SH
chmod +x "$FAKE"/*
export FAKE_DPKG_LIST="$W/dpkg.list"
printf 'bash\t5.2\tinstalled\njq\t1.6\tinstalled\ncurl\t7.88\tinstalled\ngone\t1\tconfig-files\n' >"$FAKE_DPKG_LIST"
export PATH="$FAKE:$PATH"

PROFILE="$HOME/.config/haven/capture.toml"
mkdir -p "$(dirname "$PROFILE")"
cat >"$PROFILE" <<EOF2
repository = "$REPO"
[track]
paths = ["~/.config/app", "~/.config/nvim", "~/.bashrc", "~/.ssh", "~/.not-there"]
exclude = ["*.swp"]
[packages]
timeout = 3
EOF2

check "cold capture with fake managers (one hangs, one fails): finishes, warns, records lists"
start=$SECONDS
CMD_TIMEOUT=120 expect_exit 0 hv --jobs 1 --json capture
[ $((SECONDS - start)) -lt 60 ] || fail "a hanging package manager held the capture"
cp "$OUT" "$W/cap1.json"
assert_grep 'snap.txt: .*timed out' "$ERR" "hanging snap not reported"
assert_grep 'npm.txt: .*failed \(exit 3\)' "$ERR" "failing npm not reported"
assert_grep 'not-there does not exist' "$ERR"
python3 - "$W/cap1.json" <<'PY' || fail "capture summary"
import json, os, sys
s = [json.loads(l) for l in open(sys.argv[1])][-1]
assert s["message_type"] == "summary" and s["files"] == 82 and s["files_read"] == 82, s
assert s["packages"] == ["apt-manual.txt", "dpkg.txt", "flatpak.txt", "pip-user.txt", "pip.txt"], s
assert s["scan_tag"].startswith("haven-scan:%s/" % os.environ["SCAN_VERSION"]), s
PY

check "unchanged capture with --jobs 2: no file read, same home tree"
expect_exit 0 hv --jobs 2 --json capture
cp "$OUT" "$W/cap2.json"
check "--skip-if-unchanged: the unchanged set (files, package lists, profile) writes no snapshot"
snaps_before="$(ls "$REPO/snapshots" | wc -l)"
expect_exit 0 hv --json capture --skip-if-unchanged
python3 - "$W/cap2.json" "$OUT" <<'PY' || fail "skipped capture summary"
import json, sys
b, s = ([json.loads(l) for l in open(p)][-1] for p in sys.argv[1:3])
assert s["skipped"] is True and s["snapshot_id"] == "" and s["files_read"] == 0, s
assert s["tree"] == b["tree"] and s["parent"] == b["snapshot_id"], (s, b)
assert b["skipped"] is False, b
PY
expect_exit 0 hv capture --skip-if-unchanged
assert_grep "^skipped creating snapshot: the tree is the parent capture's$" "$OUT"
[ "$(ls "$REPO/snapshots" | wc -l)" = "$snaps_before" ] || fail "a skipped capture wrote a snapshot"
check "unchanged captures read no index file: the state gives the blobs outside the folders"
need_cmd strace strace
for i in 1 2; do  # the second uses the state the first wrote without the index
  ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" run_ok strace -f -qq \
    -e trace=openat -o "$W/unchanged$i.trace" "$HAVEN" --cache-dir "$HAVEN_CACHE_DIR" capture
  grep -q '/snapshots/[0-9a-f]\{64\}' "$W/unchanged$i.trace" || fail "no snapshot read in the trace"
  if grep '/index/[0-9a-f]\{64\}' "$W/unchanged$i.trace"; then
    fail "unchanged capture $i read an index file"
  fi
done
check "forced re-read (another scan policy via allowlist) with --jobs 4: same home tree"
sed 's/^\[packages\]/[secrets]\nallow_rules = ["jwt"]\n[packages]/' "$PROFILE" >"$W/other.toml"
expect_exit 0 hv --jobs 4 --json capture --profile "$W/other.toml"
cp "$OUT" "$W/cap3.json"
python3 - "$W/cap1.json" "$W/cap2.json" "$W/cap3.json" <<'PY' || fail "determinism / gating"
import json, sys
a, b, c = ([json.loads(l) for l in open(p)][-1] for p in sys.argv[1:4])
print("  home trees:", a["home_tree"][:12], b["home_tree"][:12], c["home_tree"][:12])
assert a["home_tree"] and a["home_tree"] == b["home_tree"] == c["home_tree"], "home tree differs"
assert b["files_read"] == 0 and b["parent_trusted"], b
# the capture state in the cache folder gave the three tracked folders their trees
assert b["state_used"] and b["dirs_reused"] == 3, b  # ~/.config/app, ~/.config/nvim, ~/.ssh
assert a["state_used"] is False and c["state_used"] is False, (a, c)
assert c["files_read"] == 82 and not c["parent_trusted"], c
PY

check "restic reads the captures: check, snapshots (tags), ls (package lists)"
run_ok r -r "$REPO" check --read-data
run_ok r -r "$REPO" snapshots --json
python3 - "$OUT" <<'PY' || fail "restic snapshots"
import json, os, sys
s = json.load(open(sys.argv[1]))
assert len(s) == 5, len(s)  # cold, unchanged, two unchanged under strace, --profile other
for x in s:
    assert "capture" in x["tags"] and any(t.startswith("haven-scan:%s/" % os.environ["SCAN_VERSION"]) for t in x["tags"]), x["tags"]
PY
run_ok r -r "$REPO" ls latest
assert_grep '^/\.haven/packages/dpkg\.txt$' "$OUT"
run_ok r -r "$REPO" dump latest /.haven/packages/dpkg.txt
printf 'bash\t5.2\ncurl\t7.88\njq\t1.6\n' | cmp - "$OUT" || fail "dpkg.txt content"
assert_grep '^/\.haven/profile\.toml$' "$W/out.$((OUT_N - 1))"
run_ok r -r "$REPO" dump latest /.haven/profile.toml
cmp "$OUT" "$W/other.toml" || fail "the stored profile is not the one the capture used"
run_ok hv -r "$REPO" check --read-data

check "secrets in three files: blocked, same bytes every run and job count, nothing stored"
GH="ghp_$(rand 36)"
PW="$(secret_value 24)"
AK="AKIA$(LC_ALL=C tr -dc 'A-Z2-7' </dev/urandom | head -c 16 || true)"
printf 'export TOKEN=%s\n' "$GH" >"$HOME/.config/nvim/zz-token.vim"
printf 'db_password = "%s"\n' "$PW" >"$HOME/.config/app/db.conf"
printf 'key = %s\n' "$AK" >>"$HOME/.bashrc"
snaps_before=$(ls "$REPO/snapshots" | wc -l)
packs_before=$(find "$REPO/data" -type f | wc -l)
first=""
for jobs in 1 2 4 1 3; do
  expect_exit 4 hv --jobs "$jobs" capture
  cat "$OUT" "$ERR" >"$W/blocked.$jobs"
  if [ -z "$first" ]; then first="$W/blocked.$jobs"; else cmp "$first" "$W/blocked.$jobs" || fail "blocked report differs (jobs $jobs)"; fi
done
head -n 1 "$ERR" | grep -qxF "capture blocked: secret found in $HOME/.bashrc" || { head -3 "$ERR"; fail "first line must name the lexically first file"; }
assert_grep "^$HOME/.config/app/db.conf:1:1: secret-assignment: " "$ERR"
assert_grep "^$HOME/.config/nvim/zz-token.vim:1:14: github-token: ghp_\*\*\*\*$" "$ERR"
for s in "$GH" "$PW" "$AK"; do ! grep -qF "$s" "$first" || fail "a secret was printed in full"; done
[ "$(ls "$REPO/snapshots" | wc -l)" = "$snaps_before" ] || fail "a blocked capture stored a snapshot"
[ "$(find "$REPO/data" -type f | wc -l)" = "$packs_before" ] || fail "a blocked capture stored data"

check "haven scan: same findings, JSON, exit 4"
expect_exit 4 hv scan "$HOME"
[ "$(wc -l <"$OUT")" = 4 ] || fail "scan found $(wc -l <"$OUT") findings, want 4 (3 + the excluded x.swp)"
expect_exit 4 hv --json scan "$HOME/.config"
python3 - "$OUT" <<'PY' || fail "scan --json"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert [r["rule"] for r in rows] == ["secret-assignment", "secret-assignment", "github-token"], rows
assert all(len(r["fingerprint"]) == 16 and r["line"] == 1 for r in rows), rows
PY
expect_exit 0 hv scan "$HOME/.ssh"

check "inline haven:allow and warn mode"
printf 'export TOKEN=%s  # haven:allow\n' "$GH" >"$HOME/.config/nvim/zz-token.vim"
sed 's/^\[packages\]/[secrets]\nmode = "warn"\n[packages]/' "$PROFILE" >"$W/warn.toml"
expect_exit 4 hv capture --profile "$W/warn.toml"
assert_grep 'secrets stored' "$ERR"
[ "$(ls "$REPO/snapshots" | wc -l)" = $((snaps_before + 1)) ] || fail "warn mode must store"
rm "$HOME/.config/app/db.conf"; sed -i '/^key = /d' "$HOME/.bashrc"
expect_exit 0 hv capture

check "apply into another home: dry run first, then for real; .haven-orig kept"
export HOME="$W/home2"
mkdir -p "$HOME"
printf 'mine\n' >"$HOME/.bashrc"
printf 'keep\n' >"$HOME/unrelated"
expect_exit 0 hv -r "$REPO" apply --dry-run
assert_grep "^would update $HOME/.bashrc" "$OUT"
assert_grep "^would create $HOME/.config/app/f1.conf" "$OUT"
[ ! -e "$HOME/.config" ] || fail "dry run wrote files"
expect_exit 0 hv -r "$REPO" apply
for f in .bashrc .ssh/config .config/app/f7.conf .config/nvim/zz-token.vim; do
  cmp "$W/home/$f" "$HOME/$f" || fail "apply: $f differs"
done
[ "$(cat "$HOME/.bashrc.haven-orig")" = mine ] || fail "no .haven-orig"
[ "$(cat "$HOME/unrelated")" = keep ] || fail "apply touched an unrelated file"
[ "$(stat -c %a "$HOME/.ssh")" = 700 ] && [ "$(stat -c %a "$HOME/.ssh/config")" = 600 ] || fail "modes"
expect_exit 0 hv -r "$REPO" apply
assert_grep ' 0 created, 0 updated, 8[0-9] unchanged' "$OUT"

check "packages diff against the recorded lists"
export HOME="$W/home"
printf 'bash\t5.2\tinstalled\njq\t1.7\tinstalled\nzsh\t5.9\tinstalled\n' >"$FAKE_DPKG_LIST"
expect_exit 0 hv -r "$REPO" packages diff --timeout 3
assert_grep '^dpkg.txt: 1 missing here, 1 extra here, 1 other version here$' "$OUT"
assert_grep '^  ~ jq	1.6 -> jq	1.7$' "$OUT"
assert_grep '^  - curl	7.88$' "$OUT"
assert_grep '^  \+ zsh	5.9$' "$OUT"
assert_grep '^  install: sudo apt-get install -y curl$' "$OUT"
assert_grep '^pip.txt: 0 missing here, 0 extra here, 0 other version here$' "$OUT"

pass
