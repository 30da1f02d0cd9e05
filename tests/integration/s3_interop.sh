#!/usr/bin/env bash
# haven and restic 0.14 share an S3 bucket on a real Ceph radosgw (tests/tools/s3_lib.sh):
#   haven init (creates the bucket) + backup -> restic check --read-data, restic restore
#     identical (compare_trees), haven restore exact
#   restic init + backup -> haven check --read-data, haven restore identical
#   forget --prune on S3 (haven), then restic check --read-data clean, the kept snapshot
#     restores; no lock objects left; no secret in any output
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../tools/lib.sh
source "$(dirname "$0")/../tools/lib.sh"
# shellcheck source-path=SCRIPTDIR source=../tools/s3_lib.sh
source "$(dirname "$0")/../tools/s3_lib.sh"
setup "$@"
need_restic
need_haven
need_python
s3_setup

SRC="$W/src"
make_tree "$SRC"
HREPO="$(s3_repo haven-made)"
RREPO="$(s3_repo restic-made)"

check "haven init creates the bucket and the repository"
run_ok hv -r "$HREPO" init
assert_grep 'created haven repository' "$OUT"

check "haven backup into S3"
run_ok hv -r "$HREPO" backup "$SRC"

check "restic check --read-data on haven's bucket"
run_ok r -r "$HREPO" check --read-data
assert_grep 'no errors were found' "$OUT"

check "restic restore of haven's snapshot is identical to the source"
run_ok r -r "$HREPO" restore latest --target "$W/restic-target"
compare_trees "$SRC" "$W/restic-target$SRC" "${RESTIC_CMP[@]}"

check "haven restore of its own snapshot (cold cache) is exact"
rm -rf "$HAVEN_CACHE_DIR"
run_ok hv -r "$HREPO" restore latest --target "$W/haven-target"
compare_trees "$SRC" "$W/haven-target$SRC"

check "restic init + backup in the same bucket, another prefix"
run_ok r -r "$RREPO" init
run_ok r -r "$RREPO" backup "$SRC"

check "haven check --read-data on restic's repository"
run_ok hv -r "$RREPO" check --read-data
assert_grep 'no errors were found' "$OUT"

check "haven restore of restic's snapshot is identical to the source"
run_ok hv -r "$RREPO" restore latest --target "$W/haven-from-restic"
compare_trees "$SRC" "$W/haven-from-restic$SRC" "${RESTIC_CMP[@]}"

check "haven forget --prune on S3 (two more backups, keep the last)"
echo "changed" >"$SRC/hello.txt"
gen_bytes 7 3000000 >"$SRC/new-3m.bin"
run_ok hv -r "$HREPO" backup "$SRC"
rm -f "$SRC/new-3m.bin"
run_ok hv -r "$HREPO" backup "$SRC"
run_ok hv -r "$HREPO" forget --keep-last 1 --prune
assert_grep 'remove|removed|deleting|delete' "$OUT" "prune removed nothing"
run_ok r -r "$HREPO" snapshots --json
python3 -c 'import json,sys; n=len(json.load(open(sys.argv[1]))); sys.exit(0 if n==1 else "snapshots: %d" % n)' "$OUT"

check "restic check --read-data after haven's prune"
run_ok r -r "$HREPO" check --read-data
assert_grep 'no errors were found' "$OUT"

check "the kept snapshot restores identically (restic and haven)"
run_ok r -r "$HREPO" restore latest --target "$W/after-prune-r"
compare_trees "$SRC" "$W/after-prune-r$SRC" "${RESTIC_CMP[@]}"
run_ok hv -r "$HREPO" restore latest --target "$W/after-prune-h"
compare_trees "$SRC" "$W/after-prune-h$SRC"

check "restic prune on haven's bucket, then haven check --read-data"
run_ok r -r "$HREPO" prune
run_ok hv -r "$HREPO" check --read-data

check "no lock objects left behind"
run_ok r -r "$HREPO" list locks --no-lock
[ ! -s "$OUT" ] || fail "locks left: $(cat "$OUT")"

check "no secret key or password in any output"
assert_no_secrets

pass "restic $RESTIC_VERSION and haven share an S3 bucket on radosgw"
