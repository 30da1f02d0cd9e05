#!/usr/bin/env bash
# `haven scan` and Debian package files (issue 17): a file whose content has the MD5 its
# package shipped (var/lib/dpkg/info/*.md5sums, or a conffile's MD5 in var/lib/dpkg/status)
# is public, so its findings are left out and counted in the summary; a modified copy, or
# the same relative path in a user's tree, is reported; --include-package-files shows all.
# The dpkg root is a fake one here (HAVEN_DPKG_ROOT). Also: `scan ~` does not enter
# haven's or restic's cache directory. Secrets are built here from random characters.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../tools/lib.sh
source "$(dirname "$0")/../tools/lib.sh"
setup "$@"
need_haven

rand() { LC_ALL=C tr -dc "$1" </dev/urandom | head -c "$2" || true; }
aws_pair() {
  printf 'aws_access_key_id = AKIA%s\naws_secret_access_key = %s%d\n' \
    "$(rand 'A-Z2-7' 16)" "$(rand 'A-Za-z0-9/+' 39)" $((RANDOM % 10))
}
ROOT="$W/root"
mkdir -p "$ROOT/usr/share/doc/pkg" "$ROOT/etc" "$ROOT/var/lib/dpkg/info" "$ROOT/home/me/usr/share/doc/pkg"
aws_pair >"$ROOT/usr/share/doc/pkg/README"
{ echo '# default configuration'; aws_pair; } >"$ROOT/etc/pkg.conf"
cp "$ROOT/usr/share/doc/pkg/README" "$ROOT/home/me/usr/share/doc/pkg/README"
(cd "$ROOT" && md5sum usr/share/doc/pkg/README) >"$ROOT/var/lib/dpkg/info/pkg.md5sums"
printf 'Package: pkg\nStatus: install ok installed\nConffiles:\n /etc/pkg.conf %s\nDescription: test\n' \
  "$(md5sum <"$ROOT/etc/pkg.conf" | cut -c1-32)" >"$ROOT/var/lib/dpkg/status"

check "unmodified package files are left out and counted"
HAVEN_DPKG_ROOT="$ROOT" expect_exit 4 hv scan "$ROOT"
[ "$(cut -d: -f1 "$OUT" | sort -u)" = "$ROOT/home/me/usr/share/doc/pkg/README" ] \
  || { cat "$OUT"; fail "only the user's copy may be reported"; }
assert_grep '^4 findings in 2 package-owned unmodified files ignored' "$ERR"

check "a modified conffile is reported"
echo '# edited by the admin' >>"$ROOT/etc/pkg.conf"
HAVEN_DPKG_ROOT="$ROOT" expect_exit 4 hv scan "$ROOT/etc" "$ROOT/usr"
[ "$(cut -d: -f1 "$OUT" | sort -u)" = "$ROOT/etc/pkg.conf" ] || { cat "$OUT"; fail "modified conffile"; }
assert_grep '^2 findings in 1 package-owned unmodified files ignored' "$ERR"

check "--include-package-files shows them; another root matches nothing"
HAVEN_DPKG_ROOT="$ROOT" expect_exit 4 hv scan --include-package-files "$ROOT/usr"
[ "$(wc -l <"$OUT")" = 2 ] || fail "--include-package-files must report the README's 2 findings"
! grep -q 'package-owned' "$ERR" || fail "nothing is ignored with --include-package-files"
HAVEN_DPKG_ROOT="$W/nowhere" expect_exit 4 hv scan "$ROOT/usr"
[ "$(wc -l <"$OUT")" = 2 ] || fail "without dpkg records nothing is ignored"
(cd "$ROOT/usr" && HAVEN_DPKG_ROOT="$ROOT" expect_exit 0 hv scan share)  # relative paths too

check "scan ~ skips haven's and restic's caches"
export HOME="$W/home"
mkdir -p "$HOME/.cache/restic/abc" "$HOME/.cache/haven/scanner" "$HOME/notes"
aws_pair >"$HOME/.cache/restic/abc/leak"
aws_pair >"$HOME/.cache/haven/leak"
aws_pair >"$HOME/notes/todo.txt"
unset XDG_CACHE_HOME RESTIC_CACHE_DIR
expect_exit 4 "$HAVEN" --cache-dir "$HOME/.cache/haven" scan "$HOME"
[ "$(cut -d: -f1 "$OUT" | sort -u)" = "$HOME/notes/todo.txt" ] || { cat "$OUT"; fail "a cache was scanned"; }
assert_grep "skipped cache directory $HOME/.cache/haven" "$ERR"
assert_grep "skipped cache directory $HOME/.cache/restic" "$ERR"
expect_exit 4 "$HAVEN" --cache-dir "$HOME/.cache/haven" scan "$HOME/.cache/restic"  # named: scanned
pass
