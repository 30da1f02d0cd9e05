#!/usr/bin/env bash
# migrate: haven upgrades a restic 0.14 version 1 repository to version 2 as restic does
# (same listing text as restic before and after; check first; config keeps its id and
# chunker polynomial); restic then checks every byte and backs up with compression into
# it; an already-v2 repository is refused with restic's words (exit 0, as restic) unless
# --force; an unknown name does nothing.
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
SRC="$W/src"
mkdir -p "$SRC/d"
gen_bytes 1 2000000 >"$SRC/d/big"
printf 'hello\n' >"$SRC/hello"
run_ok r -r "$REPO" init --repository-version 1
run_ok r -r "$REPO" backup "$SRC"
r -r "$REPO" cat config >"$W/config.before"

check "listing: the same text as restic"
same_output "migrate (v1)" -r "$REPO" migrate
run_ok hv -r "$REPO" migrate
assert_grep "^  upgrade_repo_v2	upgrade a repository to version 2$" "$OUT"

check "upgrade_repo_v2: check, then the new config"
run_ok hv -r "$REPO" migrate upgrade_repo_v2
assert_grep '^checking repository integrity\.\.\.$' "$OUT"
assert_grep '^no errors were found$' "$OUT"
assert_grep '^applying migration upgrade_repo_v2\.\.\.$' "$OUT"
assert_grep '^migration upgrade_repo_v2: success$' "$OUT"
r -r "$REPO" cat config >"$W/config.after"
python3 - "$W/config.before" "$W/config.after" <<'PYEOF' || fail "config not upgraded as restic does"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
assert a["version"] == 1 and b["version"] == 2, (a, b)
assert a["id"] == b["id"] and a["chunker_polynomial"] == b["chunker_polynomial"], (a, b)
PYEOF
ls "${TMPDIR:-/tmp}" | grep -q '^restic-migrate-upgrade-repo-v2-' && fail "backup copy of the config left behind"

check "restic reads every byte and writes compressed data into the upgraded repository"
run_ok r -r "$REPO" check --read-data
gen_bytes 2 1000000 >"$SRC/d/new"
run_ok r -r "$REPO" backup --compression max "$SRC"
run_ok r -r "$REPO" check --read-data
run_ok hv -r "$REPO" check --read-data
run_ok hv -r "$REPO" restore latest --target "$W/restored"
cmp "$SRC/d/new" "$W/restored$SRC/d/new" || fail "restore after the upgrade"

check "an already-v2 repository: restic's refusal, --force, unknown names"
same_output "migrate (v2)" -r "$REPO" migrate
run_ok hv -r "$REPO" migrate
[ "$(cat "$OUT")" = "$(printf 'available migrations:\nno migrations found')" ] || fail "v2 listing"
same_output "migrate again" -r "$REPO" migrate upgrade_repo_v2
run_ok hv -r "$REPO" migrate upgrade_repo_v2
assert_grep '^migration upgrade_repo_v2 cannot be applied: check failed$' "$ERR"
assert_grep '^If you want to apply this migration anyway, re-run with option --force$' "$ERR"
run_ok r -r "$REPO" migrate upgrade_repo_v2
assert_grep '^migration upgrade_repo_v2 cannot be applied: check failed$' "$ERR"
run_ok hv -r "$REPO" migrate --force upgrade_repo_v2
assert_grep '^check for migration upgrade_repo_v2 failed, continuing anyway$' "$ERR"
assert_grep '^migration upgrade_repo_v2: success$' "$OUT"
run_ok r -r "$REPO" check
same_output "migrate unknown" -r "$REPO" migrate no_such_migration
same_output "migrate s3_layout" -r "$REPO" migrate s3_layout
pass
