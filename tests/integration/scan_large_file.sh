#!/usr/bin/env bash
# `haven scan` streams (issue 17): a 1 GiB text file is scanned in windows, so the peak RSS
# stays <= 128 MiB, and secrets at its start, across the middle and at its end are found
# at their lines; `capture` of a 1 GiB tracked file streams it too (<= 128 MiB). Secrets
# are built here from random characters.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../tools/lib.sh
source "$(dirname "$0")/../tools/lib.sh"
setup "$@"
need_haven
need_cmd /usr/bin/time time

rand() { LC_ALL=C tr -dc 'A-Za-z0-9' </dev/urandom | head -c "$1" || true; }
F="$W/big.txt"
LINE='an ordinary line of text, key = value, nothing to see here 0123456789'
{
  printf 'token = ghp_%s\n' "$(rand 36)"
  { yes "$LINE" || true; } | head -n 7500000
  printf 'export GITLAB=glpat-%s\n' "$(rand 20)"
  { yes "$LINE" || true; } | head -n 7500000
  printf 'last = ghp_%s\n' "$(rand 36)"
} >"$F"
size=$(stat -c %s "$F")
[ "$size" -gt $((1000 * 1024 * 1024)) ] || fail "test file too small: $size"

run_ok hv scan /dev/null  # compiles the rule databases into the cache first
check "1 GiB file: findings and peak RSS"
start=$SECONDS
expect_exit 4 /usr/bin/time -f '%M %e' -o "$W/time" "$HAVEN" --cache-dir "$HAVEN_CACHE_DIR" scan "$F"
cat "$W/time"
read -r rss secs < <(tail -n 1 "$W/time")
[ "$(wc -l <"$OUT")" = 3 ] || { cat "$OUT"; fail "want 3 findings"; }
assert_grep "^$F:1:9: github-token: ghp_" "$OUT"
assert_grep "^$F:7500002:15: gitlab-token: glpa" "$OUT"
assert_grep "^$F:15000003:8: github-token: ghp_" "$OUT"
if rss_bound_applies "peak RSS of scan <= 128 MiB"; then
  [ "$rss" -le $((128 * 1024)) ] || fail "peak RSS ${rss} KiB > 128 MiB"
fi
[ $((SECONDS - start)) -lt 20 ] || fail "scan took ${secs}s (limit 20 s)"
log "1 GiB scanned: peak RSS ${rss} KiB, ${secs} s"

check "capture of the same file (without its secrets) streams too: peak RSS <= 128 MiB, stored whole"
sed -i -e '1d' -e '$d' -e '/^export GITLAB=/d' "$F"
export HOME="$W/home"
mkdir -p "$HOME"
ln "$F" "$HOME/big.txt"
printf '[track]\npaths = ["~/big.txt"]\n[packages]\nmanagers = []\n' >"$W/profile.toml"
run_ok hv -r "$W/repo" init --scrypt 1024,8,1
expect_exit 0 /usr/bin/time -f '%M %e' -o "$W/time" "$HAVEN" --cache-dir "$HAVEN_CACHE_DIR" \
  -r "$W/repo" --jobs 2 capture --profile "$W/profile.toml"
read -r rss secs < <(tail -n 1 "$W/time")
if rss_bound_applies "peak RSS of capture <= 128 MiB"; then
  [ "$rss" -le $((128 * 1024)) ] || fail "capture peak RSS ${rss} KiB > 128 MiB"
fi
log "1 GiB captured: peak RSS ${rss} KiB, ${secs} s"
run_ok hv -r "$W/repo" dump latest "$HOME/big.txt"
cmp "$OUT" "$F" || fail "the captured file differs"
rm -f "$OUT" "$W/out"
pass
