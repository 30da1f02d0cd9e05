#!/usr/bin/env bash
# A restic user's command line works unchanged (issue 9, §2): `-p`, `--repository-file` and
# its variables, the password on standard input when it is not a terminal, restic's
# precedence between the password sources, unknown commands and flags in restic's words
# (with restic as the way to a command haven does not have yet), and `snapshots --latest N`
# and `-c/--compact`, whose tables must be byte-identical to restic's on the same repository.
set -euo pipefail
source "$(dirname "$0")/../tools/lib.sh"
setup "$@"
need_haven
need_restic
unset HAVEN_REPOSITORY_FILE

PW="$RESTIC_PASSWORD"
REPO="$W/repo"
printf '%s\n' "$PW" >"$W/pw"
printf 'wrong-password\n' >"$W/badpw"
printf 'cat %q\n' "$W/pw" >"$W/pwcmd"
mkdir -p "$W/data/a" "$W/data/b"
echo a >"$W/data/a/f"
echo b >"$W/data/b/f"
run_ok hv -r "$REPO" init
run_ok hv -r "$REPO" backup "$W/data/a"

# piped WANT TEXT CMD...: run CMD with TEXT (one line) on a pipe as its standard input;
# stdout -> $W/out, stderr -> $W/err; fail unless it exits WANT.
piped() {
  local want="$1" text="$2" rc
  shift 2
  set +e
  printf '%s\n' "$text" | "$@" >"$W/out" 2>"$W/err"
  rc=${PIPESTATUS[1]}
  set -e
  if [ "$rc" != "$want" ]; then
    cat "$W/out" "$W/err" >&2
    fail "exit $rc (wanted $want) from: $* (stdin: $text)"
  fi
}

# Without any password variable from here on, unless a check sets one.
unset HAVEN_PASSWORD RESTIC_PASSWORD

# ---- 1. global options --------------------------------------------------------------------
check "-p is short for --password-file (before or after the command)"
run_ok hv -r "$REPO" -p "$W/pw" snapshots
run_ok hv -r "$REPO" snapshots -p "$W/pw"
expect_exit 12 hv -r "$REPO" -p "$W/badpw" snapshots

check "--repository-file, HAVEN_REPOSITORY_FILE, RESTIC_REPOSITORY_FILE: the first line is the repository"
printf '%s\n' "$REPO" >"$W/repofile"
printf '%s\n' "$W/no-such-repo" >"$W/badrepofile"
run_ok hv --repository-file "$W/repofile" -p "$W/pw" snapshots
run_ok env HAVEN_REPOSITORY_FILE="$W/repofile" "$HAVEN" --no-cache -p "$W/pw" snapshots
run_ok env RESTIC_REPOSITORY_FILE="$W/repofile" "$HAVEN" --no-cache -p "$W/pw" snapshots
expect_exit 1 hv --repository-file "$W/missing-file" -p "$W/pw" snapshots
assert_grep "repository file .*missing-file" "$ERR" "a missing repository file is named"

check "-r together with --repository-file is refused, as restic does"
expect_exit 1 hv -r "$REPO" --repository-file "$W/repofile" -p "$W/pw" snapshots
assert_grep "Options -r and --repository-file are mutually exclusive" "$ERR"
expect_exit 1 r -r "$REPO" --repository-file "$W/repofile" -p "$W/pw" snapshots
assert_grep "Options -r and --repository-file are mutually exclusive" "$ERR"

check "precedence: -r > --repository-file > *_REPOSITORY > *_REPOSITORY_FILE"
run_ok env HAVEN_REPOSITORY_FILE="$W/badrepofile" "$HAVEN" --no-cache -r "$REPO" -p "$W/pw" snapshots
run_ok env HAVEN_REPOSITORY="$W/no-such-repo" "$HAVEN" --no-cache --repository-file "$W/repofile" -p "$W/pw" snapshots
run_ok env HAVEN_REPOSITORY="$REPO" HAVEN_REPOSITORY_FILE="$W/badrepofile" "$HAVEN" --no-cache -p "$W/pw" snapshots
run_ok env HAVEN_REPOSITORY_FILE="$W/repofile" RESTIC_REPOSITORY="$W/no-such-repo" "$HAVEN" --no-cache -p "$W/pw" snapshots

check "the password is read from standard input when it is not a terminal (restic too)"
piped 0 "$PW" r -r "$REPO" snapshots
piped 0 "$PW" hv -r "$REPO" snapshots
assert_grep "reading repository password from stdin" "$W/err"
piped 0 "$PW" hv -r "$REPO" --json snapshots
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$W/out" || fail "stdout of --json is not JSON alone"
piped 0 "$PW" hv -q -r "$REPO" snapshots
[ ! -s "$W/err" ] || fail "-q still printed: $(cat "$W/err")"
piped 12 "wrong-password" hv -r "$REPO" snapshots
expect_exit 1 hv -r "$REPO" snapshots  # stdin is /dev/null: no password
assert_grep "no password given: standard input is not a terminal and is empty" "$ERR"
piped 1 "" hv -r "$REPO" snapshots
assert_grep "empty password" "$W/err"

check "init and key add read their passwords from standard input, one line each"
piped 0 "$PW" hv -r "$W/repo2" init
run_ok r -r "$W/repo2" -p "$W/pw" snapshots
piped 0 "$(printf '%s\n%s' "$PW" "second-password")" hv -r "$REPO" key add
printf 'second-password\n' >"$W/pw2"
run_ok r -r "$REPO" -p "$W/pw2" snapshots

check "restic's precedence between the password sources"
# a password variable beats standard input (restic: the same)
piped 12 "$PW" env HAVEN_PASSWORD=wrong-password "$HAVEN" --no-cache -r "$REPO" snapshots
piped 1 "$PW" env RESTIC_PASSWORD=wrong-password restic --no-cache -r "$REPO" snapshots
# *_PASSWORD_FILE and *_PASSWORD_COMMAND beat *_PASSWORD
run_ok env RESTIC_PASSWORD=wrong-password RESTIC_PASSWORD_FILE="$W/pw" restic --no-cache -r "$REPO" snapshots
run_ok env RESTIC_PASSWORD=wrong-password RESTIC_PASSWORD_FILE="$W/pw" "$HAVEN" --no-cache -r "$REPO" snapshots
run_ok env HAVEN_PASSWORD=wrong-password HAVEN_PASSWORD_FILE="$W/pw" "$HAVEN" --no-cache -r "$REPO" snapshots
run_ok env HAVEN_PASSWORD=wrong-password HAVEN_PASSWORD_COMMAND="sh $W/pwcmd" "$HAVEN" --no-cache -r "$REPO" snapshots
# a flag beats the variables
run_ok env HAVEN_PASSWORD_FILE="$W/badpw" "$HAVEN" --no-cache -r "$REPO" -p "$W/pw" snapshots
run_ok env HAVEN_PASSWORD=wrong-password "$HAVEN" --no-cache -r "$REPO" --password-command "sh $W/pwcmd" snapshots
# HAVEN_* before RESTIC_*
run_ok env HAVEN_PASSWORD="$PW" RESTIC_PASSWORD_FILE="$W/badpw" "$HAVEN" --no-cache -r "$REPO" snapshots
# file and command at once are refused (restic: the same message)
expect_exit 1 r -r "$REPO" -p "$W/pw" --password-command "sh $W/pwcmd" snapshots
assert_grep "Password file and command are mutually exclusive" "$ERR"
expect_exit 1 hv -r "$REPO" -p "$W/pw" --password-command "sh $W/pwcmd" snapshots
assert_grep "Password file and command are mutually exclusive" "$ERR"
expect_exit 1 env HAVEN_PASSWORD_FILE="$W/pw" HAVEN_PASSWORD_COMMAND="sh $W/pwcmd" "$HAVEN" --no-cache -r "$REPO" snapshots
assert_grep "Password file and command are mutually exclusive" "$ERR"

export HAVEN_PASSWORD="$PW" RESTIC_PASSWORD="$PW"

# ---- 2. unknown commands and flags --------------------------------------------------------
check "an unknown command is named in restic's words"
expect_exit 1 r diffx
assert_grep '^unknown command "diffx" for "restic"$' "$ERR"
expect_exit 1 hv diffx
assert_grep '^unknown command "diffx" for "haven"$' "$ERR"
expect_exit 1 hv snapshotz
assert_grep '^unknown command "snapshotz" for "haven"$' "$ERR"
assert_grep '^Did you mean this\?$' "$ERR"
assert_grep '^	snapshots$' "$ERR"
assert_grep "^Run 'haven --help' for usage.$" "$ERR"
if grep -q "restic" "$ERR"; then fail "restic suggested for a command restic does not have"; fi

check "restic 0.14's last commands are haven's; one haven does not have yet is named with restic's"
for c in mount migrate recover; do
  run_ok hv -r "$REPO" "$c" --help
  if grep -q "unknown command" "$ERR"; then fail "$c is unknown"; fi
done
for c in options features; do
  expect_exit 1 hv "$c"
  assert_grep "^unknown command \"$c\" for \"haven\"$" "$ERR"
  assert_grep "^haven has no \"$c\" command yet; restic has one:$" "$ERR"
  assert_grep "^  restic $c \.\.\.$" "$ERR"
done
# self-update is known and refused: the package manager updates haven (issue 14)
expect_exit 1 hv self-update
assert_grep "package manager" "$ERR"
expect_exit 1 hv -r "$REPO" key bogus
assert_grep '^unknown command "bogus" for "haven key"$' "$ERR"

check "a misspelt flag names the flag and the command's help; nothing runs"
expect_exit 1 r -r "$REPO" backup --exlude '*.o' "$W/data"
assert_grep '^unknown flag: --exlude$' "$ERR"
expect_exit 1 hv -r "$REPO" backup --exlude '*.o' "$W/data"
assert_grep '^unknown flag: --exlude$' "$ERR"
assert_grep "^Run 'haven backup --help' for usage.$" "$ERR"
expect_exit 1 hv -r "$REPO" backup --exlude='*.o' "$W/data"
assert_grep '^unknown flag: --exlude$' "$ERR"
expect_exit 1 hv -r "$REPO" key add --bogus
assert_grep '^unknown flag: --bogus$' "$ERR"
assert_grep "^Run 'haven key add --help' for usage.$" "$ERR"
expect_exit 1 hv -r "$REPO" snapshots -x
assert_grep "^unknown shorthand flag: 'x' in -x$" "$ERR"
expect_exit 1 hv --bogus -r "$REPO" snapshots
assert_grep '^unknown flag: --bogus$' "$ERR"
run_ok hv -r "$REPO" --json snapshots
n=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$OUT")
[ "$n" = 1 ] || fail "a command with a misspelt flag ran anyway ($n snapshots, want 1)"

# ---- 7. snapshots --latest N and -c/--compact, against restic --------------------------------
check "snapshots tables (--latest, --compact, full) are restic's, byte for byte"
R="$W/repo-tables"
run_ok r -r "$R" init
t=0
snap() {
  t=$((t + 1))
  run_ok r -r "$R" backup --time "2021-03-0$t 10:00:00" "$@"
}
snap --host alpha --tag daily "$W/data/a"
snap --host alpha --tag daily --tag weekly "$W/data/a"
snap --host alpha "$W/data/a" "$W/data/b"
snap --host a-very-long-hostname.example.org --tag a-rather-long-tag-name,x "$W/data/b"
snap --host alpha "$W/data/b" "$W/data/a"  # the same set of paths as the third
snap --host alpha "$W/data/a"
snap --host beta --tag daily "$W/data/a"
for args in "" "--latest 1" "--latest 2" "-c" "--compact --latest 1" "-c --latest 2" \
            "--latest 1 --host alpha" "-c --latest 1 --tag daily"; do
  # shellcheck disable=SC2086  # word splitting of $args is intended
  run_ok r -r "$R" --no-cache snapshots $args
  cp "$OUT" "$W/restic.txt"
  # shellcheck disable=SC2086
  run_ok hv -r "$R" --no-cache snapshots $args
  diff -u "$W/restic.txt" "$OUT" || fail "snapshots $args differs from restic's"
done
# shellcheck disable=SC2016
ids() { python3 -c 'import json,sys; print(" ".join(sorted(s["id"] for s in json.load(open(sys.argv[1])))))' "$1"; }
run_ok r -r "$R" --no-cache --json snapshots --latest 1
want=$(ids "$OUT")
run_ok hv -r "$R" --no-cache --json snapshots --latest 1
[ "$(ids "$OUT")" = "$want" ] || fail "snapshots --json --latest 1 selects other snapshots than restic"
[ "$(wc -w <<<"$want")" = 4 ] || fail "expected 4 groups (host, paths), got: $want"

pass "restic's global options, password sources, unknown command/flag reports and snapshots tables"
