#!/usr/bin/env bash
# `cmake --install` puts the binary, one man page per command and the bash, zsh and fish
# completions under a prefix (drop-in issue, section 3); the pages render without groff
# warnings and the bash completion completes a command name.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../tools/lib.sh
source "$(dirname "$0")/../tools/lib.sh"
setup "$@"
need_haven
need_cmd cmake cmake
need_cmd groff groff-base

BUILD="$(dirname "$HAVEN")"
[ -f "$BUILD/cmake_install.cmake" ] || fail "no cmake_install.cmake beside $HAVEN"
run_ok cmake --install "$BUILD" --prefix "$W/prefix"
P="$W/prefix"
[ -x "$P/bin/haven" ] || fail "bin/haven not installed"
for cmd in backup restore snapshots key-add forget prune check init; do
  page="$P/share/man/man1/haven-$cmd.1"
  [ -s "$page" ] || fail "no man page haven-$cmd.1"
  groff -ww -man -Tutf8 "$page" >/dev/null 2>"$W/groff.err" || fail "groff failed on haven-$cmd.1"
  [ ! -s "$W/groff.err" ] || { cat "$W/groff.err"; fail "groff warned on haven-$cmd.1"; }
done
[ -s "$P/share/man/man1/haven.1" ] || fail "no haven.1"
[ -s "$P/share/bash-completion/completions/haven" ] || fail "no bash completion"
[ -s "$P/share/zsh/vendor-completions/_haven" ] || fail "no zsh completion"
[ -s "$P/share/fish/vendor_completions.d/haven.fish" ] || fail "no fish completion"
out=$(bash -c 'source "$1"; COMP_WORDS=(haven ba); COMP_CWORD=1; COMP_LINE="haven ba"; COMP_POINT=8
  f=$(complete -p haven | sed -E "s/.* -F ([^ ]+) .*/\1/"); "$f" haven ba haven; printf "%s\n" "${COMPREPLY[@]}"' \
  _ "$P/share/bash-completion/completions/haven")
grep -qx backup <<<"$out" || fail "bash completion of 'haven ba' gave: $out"
"$P/bin/haven" version >/dev/null || fail "the installed binary does not run"
pass
