#!/usr/bin/env bash
# list, cache, self-update against restic 0.14 on the same repository
# (tests/tools/cmds_repo.sh):
#  * `list blobs|packs|index|snapshots|keys|locks`: the same ids (sorted: both print in
#    listing order), a the refusals
#    (no type, two types, an unknown type);
#  * `cache` on a cache base shared by both tools (a folder aged 40 days, one in use, a
#    file and a foreign folder that are not caches): the same table with and without
#    --no-size and --max-age, the same --cleanup, the empty and --no-cache answers;
#  * `self-update` refuses (exit 1) and points at the package manager.
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

sorted_same() {
  local what="$1"; shift
  local rc_r=0 rc_h=0
  { r "$@" </dev/null || rc_r=$?; } | LC_ALL=C sort >"$W/sorted.r"
  { hv "$@" </dev/null || rc_h=$?; } | LC_ALL=C sort >"$W/sorted.h"
  [ "$rc_r" = "$rc_h" ] || fail "$what: exit $rc_r (restic) vs $rc_h (haven)"
  cmp -s "$W/sorted.r" "$W/sorted.h" || { diff "$W/sorted.r" "$W/sorted.h" | head -40 >&2; fail "$what differs"; }
}

check "list: the same ids as restic"
for t in blobs packs index snapshots keys locks; do
  sorted_same "list $t" -r "$REPO" list "$t"
  [ -s "$W/sorted.h" ] || [ "$t" = locks ] || fail "list $t is empty"
done
[ "$(wc -l <"$W/sorted.h")" = 0 ] || fail "list locks should be empty"

# a lock file of another process is listed (the listing does not read it)
junk="$(printf 'lock of another process' | sha256sum | cut -c1-64)"
printf 'lock of another process' >"$REPO/locks/$junk"
sorted_same "list locks (one)" -r "$REPO" list locks
assert_grep "^$junk\$" "$W/sorted.h"
rm -f "$REPO/locks/$junk"
for args in "" "blobs packs" "bogus"; do
  # shellcheck disable=SC2086
  same_output "list $args" -r "$REPO" list $args
done
expect_exit 1 hv -r "$REPO" list
assert_grep 'type not specified, usage: list \[flags\] \[blobs\|packs\|index\|snapshots\|keys\|locks\]' "$ERR"
expect_exit 1 hv -r "$REPO" list bogus
assert_grep 'invalid type' "$ERR"

check "cache: the same table and cleanup as restic"
# Both tools with an explicit --cache-dir (lib.sh's r and hv add their own).
rx() { timeout -k 10 "${CMD_TIMEOUT:-300}" restic "$@"; }
hx() { timeout -k 10 "${CMD_TIMEOUT:-300}" "$HAVEN" "$@"; }
C="$W/shared-cache"
mkdir -p "$C/$(printf 'a%.0s' $(seq 64))/snapshots" "$C/not-a-cache"
printf '12345' >"$C/$(printf 'a%.0s' $(seq 64))/snapshots/x"
: >"$C/$(printf 'b%.0s' $(seq 64))"
touch -d '40 days ago' "$C/$(printf 'a%.0s' $(seq 64))"
run_ok rx -r "$REPO" --cache-dir "$C" snapshots
run_ok hx -r "$REPO" --cache-dir "$C" snapshots
# restic and haven share the repository's cache folder; its mtime is now
run_ok rx --cache-dir "$C" cache
cp "$OUT" "$W/cache.r"
run_ok hx --cache-dir "$C" cache
cmp -s "$W/cache.r" "$OUT" || { diff "$W/cache.r" "$OUT" >&2; fail "cache differs"; }
assert_grep '^aaaaaaaaaa  40 days ago  yes +5 B$' "$OUT"
assert_grep '^2 cache dirs in ' "$OUT"
for args in "--no-size" "--max-age 50" "--no-size --max-age 1"; do
  # shellcheck disable=SC2086
  run_ok rx --cache-dir "$C" cache $args
  cp "$OUT" "$W/cache.r"
  # shellcheck disable=SC2086
  run_ok hx --cache-dir "$C" cache $args
  cmp -s "$W/cache.r" "$OUT" || { diff "$W/cache.r" "$OUT" >&2; fail "cache $args differs"; }
done
cp -a "$C" "$W/cache-copy"
run_ok rx --cache-dir "$W/cache-copy" cache --cleanup
cp "$OUT" "$W/cleanup.r"
run_ok hx --cache-dir "$C" cache --cleanup
cmp -s "$W/cleanup.r" "$OUT" || { diff "$W/cleanup.r" "$OUT" >&2; fail "cache --cleanup differs"; }
assert_grep '^remove 1 old cache directories$' "$OUT"
[ "$(ls "$C")" = "$(ls "$W/cache-copy")" ] || fail "cleanup left different folders"
[ ! -e "$C/$(printf 'a%.0s' $(seq 64))" ] || fail "the old folder is still there"
[ -d "$C/not-a-cache" ] || fail "a foreign folder was removed"
run_ok hx --cache-dir "$C" cache --cleanup
assert_grep '^no old cache dirs found$' "$OUT"
run_ok rx --cache-dir "$W/nothing" cache
cp "$OUT" "$W/none.r"
run_ok hx --cache-dir "$W/nothing" cache
cmp -s "$W/none.r" "$OUT" || fail "empty cache answer differs"
expect_exit 1 hx --no-cache cache
assert_grep 'Refusing to do anything, the cache is disabled' "$ERR"
expect_exit 1 hx cache extra
expect_exit 1 rx cache extra

check "self-update refuses"
expect_exit 1 hv self-update
assert_grep 'package manager' "$ERR"
pass
