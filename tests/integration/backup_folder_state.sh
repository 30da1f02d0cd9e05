#!/usr/bin/env bash
# The backup's folder state (docs/folder-state.md) end to end: the first backup writes it
# into the cache folder, later backups of a changing tree (files rewritten in place, added,
# removed, a folder renamed, a mode and an xattr changed) take unchanged folders from it,
# and every snapshot restores to exactly the tree it was taken of, with haven and with
# restic (restic check --read-data: the repository is restic's). A dry run and --no-cache
# write no state; prune (which rewrites the index) makes the next backup do without it.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../tools/lib.sh
source "$(dirname "$0")/../tools/lib.sh"
setup "$@"
need_restic
need_haven
need_python
need_cmd setfattr attr

REPO="$W/repo"
SRC="$W/src"
run_ok hv -r "$REPO" init
for d in a a/deep a/deep/deeper b c; do
  mkdir -p "$SRC/$d"
  for i in $(seq 1 20); do printf '%s file %d\n' "$d" "$i" >"$SRC/$d/f$i"; done
done
ln -s a/f1 "$SRC/link"

state_files() { find "$HAVEN_CACHE_DIR" -path '*/backup/backup-*' -type f | LC_ALL=C sort; }
N=0
backup_and_verify() {  # backs up $SRC, then restores the snapshot with haven and restic
  N=$((N + 1))
  run_ok hv -r "$REPO" backup "$SRC"
  rm -rf "$W/rh" "$W/rr"
  run_ok hv -r "$REPO" restore latest --target "$W/rh"
  compare_trees "$SRC" "$W/rh$SRC"
  run_ok r -r "$REPO" restore latest --target "$W/rr"
  compare_trees "$SRC" "$W/rr$SRC"
}

log "dry run and --no-cache write no state"
run_ok hv -r "$REPO" backup --dry-run "$SRC"
[ -z "$(state_files)" ] || fail "a dry run wrote a folder state"
run_ok hv -r "$REPO" --no-cache backup "$SRC"
[ -z "$(state_files)" ] || fail "--no-cache wrote a folder state"

log "first backup writes the state"
backup_and_verify
[ "$(state_files | wc -l)" = 1 ] || fail "no folder state after a backup: $(state_files)"
first_state=$(sha256sum "$(state_files)" | cut -c1-64)

log "unchanged, then every kind of change"
backup_and_verify
assert_grep 'Files: +0 new, +0 changed, +100 unmodified' "$W/out.$((OUT_N - 2))"
sleep 0.05
printf 'B file 7\n' >"$SRC/a/deep/deeper/f7"        # same size, in place
backup_and_verify
printf 'new\n' >"$SRC/b/added"; rm "$SRC/c/f3"
backup_and_verify
mv "$SRC/a/deep" "$SRC/a/moved"; chmod 600 "$SRC/b/f2"; setfattr -n user.k -v v "$SRC/c"
backup_and_verify
state_now=$(sha256sum "$(state_files)" | cut -c1-64)
[ "$state_now" != "$first_state" ] || fail "the folder state was not rewritten"

log "prune rewrites the index: the next backup does without the state, and is correct"
run_ok hv -r "$REPO" forget --keep-last 2 --prune
printf 'after prune\n' >"$SRC/c/f9"
backup_and_verify
backup_and_verify
run_ok r -r "$REPO" check --read-data
pass
