#!/usr/bin/env bash
# Everyday commands beyond backup/restore, against restic as the referee:
# key add / list / passwd / remove (restic opens the repository with every new password,
# old passwords stop working), unlock of a stale lock, cat of config/snapshot/tree/blob,
# dump of a file, --stdin backups, --exclude/--files-from, --dry-run writes nothing,
# restore --include/--exclude, and --read-data-subset.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../tools/lib.sh
source "$(dirname "$0")/../tools/lib.sh"
setup "$@"
need_restic
need_haven
need_python

REPO="$W/repo"
run_ok hv -r "$REPO" init
mkdir -p "$W/src/keep" "$W/src/skip"
printf 'alpha\n' > "$W/src/keep/a.txt"
printf 'beta\n' > "$W/src/skip/b.o"
head -c 1500000 /dev/urandom > "$W/src/keep/big.bin"

check "key add: the new password opens the repository for haven and restic"
printf 'second-password\n' > "$W/pw2"
run_ok hv -r "$REPO" key add --new-password-file "$W/pw2"
run_ok hv -r "$REPO" key list
[ "$(grep -c '^[ *][0-9a-f]\{8\} ' "$OUT")" = 2 ] || fail "key list should show 2 keys"
run_ok r -r "$REPO" --password-file "$W/pw2" snapshots

check "key passwd: new password works, the old one of that key no longer does"
printf 'third-password\n' > "$W/pw3"
run_ok hv -r "$REPO" --password-file "$W/pw2" key passwd --new-password-file "$W/pw3"
run_ok r -r "$REPO" --password-file "$W/pw3" snapshots
expect_exit 12 hv -r "$REPO" --password-file "$W/pw2" snapshots
assert_grep "wrong password" "$ERR"

check "key remove: refuses the current key, removes another"
run_ok hv -r "$REPO" --password-file "$W/pw3" key list
other=$(grep -E '^ [0-9a-f]{8} ' "$OUT" | head -n 1 | awk '{print $1}')
current=$(grep -E '^\*[0-9a-f]{8} ' "$OUT" | head -n 1 | cut -c2-9)
expect_exit 1 hv -r "$REPO" --password-file "$W/pw3" key remove "$current"
run_ok hv -r "$REPO" --password-file "$W/pw3" key remove "$other"
expect_exit 12 hv -r "$REPO" snapshots  # the first password's key is gone
export HAVEN_PASSWORD=third-password RESTIC_PASSWORD=third-password

check "backup with --exclude and --files-from; --dry-run writes nothing"
cd "$W"
before=$(find "$REPO" -type f | sort | sha256sum)
run_ok hv -r "$REPO" backup --dry-run src
[ "$(find "$REPO" -type f | sort | sha256sum)" = "$before" ] || fail "--dry-run changed the repository"
run_ok hv -r "$REPO" backup src --exclude '*.o' --tag t1
run_ok hv -r "$REPO" ls latest
assert_grep '^/src/keep/a.txt$' "$OUT"
# A fixed string: the pattern 'b.o' also matched the work folder's random name (…8ub6oC).
if grep -qF '/skip/b.o' "$OUT"; then fail "--exclude '*.o' did not exclude src/skip/b.o"; fi
printf 'src/skip/b.o\n' > "$W/list"
run_ok hv -r "$REPO" backup --files-from "$W/list"
run_ok hv -r "$REPO" ls latest
assert_grep '^/src/skip/b.o$' "$OUT"

check "--stdin backup and dump give the bytes back; restic agrees"
head -c 3000000 /dev/urandom > "$W/stdin.bin"
expect_exit 0 bash -c "'$HAVEN' --cache-dir '$HAVEN_CACHE_DIR' -r '$REPO' backup --stdin --stdin-filename data.bin < '$W/stdin.bin'"
run_ok hv -r "$REPO" dump latest data.bin
cmp "$OUT" "$W/stdin.bin" || fail "haven dump differs from the --stdin input"
run_ok r -r "$REPO" dump latest /data.bin
cmp "$OUT" "$W/stdin.bin" || fail "restic dump of haven's --stdin snapshot differs"

check "cat config/snapshot/tree/blob"
run_ok hv -r "$REPO" cat config
assert_grep '"chunker_polynomial"' "$OUT"
run_ok hv -r "$REPO" snapshots --json
python3 - "$OUT" > "$W/ids" <<'PY'
import json, sys
s = [x for x in json.load(open(sys.argv[1])) if "t1" in (x.get("tags") or [])][0]
print(s["id"], s["tree"])
PY
read -r sid tree < "$W/ids"
run_ok hv -r "$REPO" cat snapshot "$sid"
assert_grep "\"tree\": \"$tree\"" "$OUT"
run_ok hv -r "$REPO" cat tree "$tree"
cp "$OUT" "$W/tree.haven"
run_ok r -r "$REPO" cat blob "$tree"
cmp "$W/tree.haven" "$OUT" || fail "haven cat tree differs from restic cat blob"

check "restore --include / --exclude"
run_ok hv -r "$REPO" restore "$sid" --target "$W/inc" --include '/src/keep/a.txt'
[ -f "$W/inc/src/keep/a.txt" ] && [ ! -e "$W/inc/src/keep/big.bin" ] || fail "--include restored the wrong set"
run_ok hv -r "$REPO" restore "$sid" --target "$W/exc" --exclude 'big.bin'
[ -f "$W/exc/src/keep/a.txt" ] && [ ! -e "$W/exc/src/keep/big.bin" ] || fail "--exclude restored the wrong set"

check "unlock removes a stale lock (dead PID), check --read-data-subset works"
run_ok r -r "$REPO" check --read-data-subset 1/2
# A stale lock: restic killed with SIGKILL while its backup holds a lock (its PID is dead).
restic --cache-dir "$RESTIC_CACHE_DIR" -r "$REPO" backup --stdin --stdin-filename x \
  < /dev/zero > /dev/null 2>&1 &
rpid=$!
for _ in $(seq 1 100); do [ -n "$(lock_files "$REPO/locks")" ] && break; sleep 0.1; done
kill -9 "$rpid"; wait "$rpid" 2>/dev/null || true
[ -n "$(lock_files "$REPO/locks")" ] || fail "expected a stale lock left by the killed restic"
run_ok hv -r "$REPO" unlock
[ -z "$(lock_files "$REPO/locks")" ] || fail "unlock did not remove the stale lock"
for s in 1/2 2/2 50%; do run_ok hv -r "$REPO" check --read-data-subset "$s"; done
expect_exit 1 hv -r "$REPO" check --read-data-subset 3/2
run_ok r -r "$REPO" check --read-data
pass "keys, cat, dump, stdin, filters, dry-run, unlock and subsets behave"
