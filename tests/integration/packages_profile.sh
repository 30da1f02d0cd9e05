#!/usr/bin/env bash
# `haven packages list` asks the managers of the capture profile's [packages] section (the
# drop-in issue found it ignored them): managers = ["dpkg"] lists only dpkg's packages,
# [] lists none, no profile asks every manager found (dpkg and apt on Debian), and
# --profile names another file.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../tools/lib.sh
source "$(dirname "$0")/../tools/lib.sh"
setup "$@"
need_haven
need_cmd dpkg-query dpkg
need_cmd apt-mark apt

export HOME="$W/home" XDG_CONFIG_HOME="$W/home/.config"
mkdir -p "$HOME/.config/haven"
headers() { grep '^# ' "$OUT" | awk '{print $2}' | tr '\n' ' '; }

run_ok "$HAVEN" packages list --timeout 60
log "no profile: $(headers)"
assert_grep '^# dpkg.txt' "$OUT" "no dpkg list without a profile"
assert_grep '^# apt-manual.txt' "$OUT" "no apt list without a profile"

printf '[track]\npaths = ["~/.bashrc"]\n[packages]\nmanagers = ["dpkg"]\ntimeout = 60\n' \
  >"$HOME/.config/haven/capture.toml"
run_ok "$HAVEN" packages list
[ "$(headers)" = "dpkg.txt " ] || fail "managers = [\"dpkg\"] listed: $(headers)"

printf '[track]\npaths = ["~/.bashrc"]\n[packages]\nmanagers = []\n' >"$W/none.toml"
run_ok "$HAVEN" packages list --profile "$W/none.toml"
[ -z "$(headers)" ] || fail "managers = [] listed: $(headers)"

printf '[track]\npaths = ["~/.bashrc"]\n[packages]\nmanagrs = []\n' >"$W/typo.toml"
expect_exit 1 "$HAVEN" packages list --profile "$W/typo.toml"
assert_grep "managrs" "$ERR" "a misspelt key is not named"
pass
