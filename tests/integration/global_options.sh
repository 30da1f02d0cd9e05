#!/usr/bin/env bash
# restic's global options that a script may pass (drop-in issue, section 2):
#   A. --pack-size / RESTIC_PACK_SIZE: new packs are closed once past that size (MiB,
#      4..128): more, smaller packs than with the default 16
#   B. --limit-upload / --limit-download (KiB/s): a backup and a restore of 6 MiB at
#      2 MiB/s take at least ~2 s each, and unlimited ones far less
#   C. -o backend.key=value: local.connections is known; an unknown key of this backend is
#      an error; another backend's option is ignored with a warning; a malformed one fails
#   D. --cacert / --tls-client-cert must name readable files; --insecure-tls is accepted
#   E. --cleanup-cache removes cache folders unused for 30 days, never the current one
#   F. init --copy-chunker-params --from-repo (restic's flags and RESTIC_FROM_* variables):
#      the new repository has the source's chunker polynomial (haven and restic sources),
#      so the same file gives the same blobs in both
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../tools/lib.sh
source "$(dirname "$0")/../tools/lib.sh"
setup "$@"
need_restic
need_haven
need_python

SRC="$W/src"
mkdir -p "$SRC"
gen_bytes 51 30000000 >"$SRC/big.bin"
max_pack() { find "$1/data" -type f -printf '%s\n' | sort -n | tail -n 1; }
packs() { find "$1/data" -type f | wc -l; }

check "A. --pack-size"
run_ok hv -r "$W/r16" init --scrypt 1024,8,1
run_ok hv -r "$W/r16" backup "$SRC"
[ "$(max_pack "$W/r16")" -gt $((8 << 20)) ] || fail "A: default packs are small: $(max_pack "$W/r16")"
run_ok hv -r "$W/r4" init --scrypt 1024,8,1
run_ok hv -r "$W/r4" --pack-size 4 backup "$SRC"
# A pack closes once it passes the target, so it may exceed it by one blob (< 8 MiB).
[ "$(max_pack "$W/r4")" -lt $((12 << 20)) ] || fail "A: --pack-size 4 made a pack of $(max_pack "$W/r4") bytes"
[ "$(packs "$W/r4")" -ge 4 ] && [ "$(packs "$W/r4")" -gt "$(packs "$W/r16")" ] \
  || fail "A: --pack-size 4 made $(packs "$W/r4") packs, the default $(packs "$W/r16")"
run_ok hv -r "$W/r4e" init --scrypt 1024,8,1
run_ok env RESTIC_PACK_SIZE=4 "$HAVEN" --cache-dir "$HAVEN_CACHE_DIR" -r "$W/r4e" backup "$SRC"
[ "$(packs "$W/r4e")" -ge 4 ] && [ "$(packs "$W/r4e")" -gt "$(packs "$W/r16")" ] \
  || fail "A: RESTIC_PACK_SIZE=4 was not used ($(packs "$W/r4e") packs)"
expect_exit 1 hv -r "$W/r4" --pack-size 2 snapshots
assert_grep "pack-size" "$ERR" "A: no message for a bad --pack-size"
run_ok r -r "$W/r4" check --read-data

check "B. --limit-upload and --limit-download"
mkdir -p "$W/six"
gen_bytes 52 6291456 >"$W/six/six.bin"
run_ok hv -r "$W/rl" init --scrypt 1024,8,1
t0=$(date +%s.%N)
run_ok hv -r "$W/rl" --limit-upload 2048 backup "$W/six"
up=$(python3 -c "import sys; print(float(sys.argv[2]) - float(sys.argv[1]))" "$t0" "$(date +%s.%N)")
t0=$(date +%s.%N)
run_ok hv -r "$W/rl" --no-cache --limit-download 2048 restore latest --target "$W/rl-out"
down=$(python3 -c "import sys; print(float(sys.argv[2]) - float(sys.argv[1]))" "$t0" "$(date +%s.%N)")
cmp -s "$W/six/six.bin" "$W/rl-out/$W/six/six.bin" || fail "B: restored file differs"
log "6 MiB at 2 MiB/s: backup ${up}s, restore ${down}s"
python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) >= 1.5 and float(sys.argv[2]) >= 1.5 else 1)" "$up" "$down" \
  || fail "B: the limits were not applied (backup ${up}s, restore ${down}s)"

check "C. -o backend options"
run_ok hv -r "$W/rl" -o local.connections=4 snapshots
expect_exit 1 hv -r "$W/rl" -o local.nope=1 snapshots
assert_grep "local.nope is not known" "$ERR" "C: unknown option not named"
expect_exit 1 hv -r "$W/rl" -o local.connections=0 snapshots
run_ok hv -r "$W/rl" -o s3.connections=2 snapshots
assert_grep "ignoring option s3.connections" "$ERR" "C: another backend's option not reported"
expect_exit 1 hv -r "$W/rl" -o connections snapshots

check "D. TLS options"
expect_exit 1 hv -r "$W/rl" --cacert "$W/missing.pem" snapshots
assert_grep "missing.pem" "$ERR" "D: missing --cacert not named"
echo "not really a certificate" >"$W/ca.pem"
run_ok hv -r "$W/rl" --cacert "$W/ca.pem" --insecure-tls snapshots
expect_exit 1 hv -r "$W/rl" --tls-client-cert "$W/missing-client.pem" snapshots

check "E. --cleanup-cache"
old="$HAVEN_CACHE_DIR/$(printf 'c%.0s' $(seq 1 64))"
young="$HAVEN_CACHE_DIR/$(printf 'd%.0s' $(seq 1 64))"
mkdir -p "$old/snapshots" "$young/snapshots"
touch -d '40 days ago' "$old"
run_ok hv -r "$W/rl" snapshots
[ -d "$old" ] || fail "E: an old cache folder was removed without --cleanup-cache"
run_ok hv -r "$W/rl" --cleanup-cache snapshots
[ ! -e "$old" ] || fail "E: --cleanup-cache kept a folder unused for 40 days"
[ -d "$young" ] || fail "E: --cleanup-cache removed a young folder"
assert_grep "removed 1 old cache folders" "$OUT" "E: no report"
n=$(find "$HAVEN_CACHE_DIR" -mindepth 1 -maxdepth 1 -type d | wc -l)
[ "$n" -ge 2 ] || fail "E: the current repository's cache folder is gone"

check "F. init --copy-chunker-params"
poly() { hv -r "$1" cat config | python3 -c 'import json,sys; print(json.load(sys.stdin)["chunker_polynomial"])'; }
echo other-pw >"$W/other-pw"
run_ok hv -r "$W/rc" --password-file "$W/other-pw" init --scrypt 1024,8,1 \
  --copy-chunker-params --from-repo "$W/rl" --from-password-command "echo $HAVEN_PASSWORD"
[ "$(HAVEN_PASSWORD=other-pw poly "$W/rc")" = "$(poly "$W/rl")" ] || fail "F: the polynomial was not copied"
run_ok r -r "$W/rr" init
run_ok env RESTIC_FROM_REPOSITORY="$W/rr" RESTIC_FROM_PASSWORD="$RESTIC_PASSWORD" \
  "$HAVEN" --cache-dir "$HAVEN_CACHE_DIR" -r "$W/rc2" init --scrypt 1024,8,1 --copy-chunker-params
[ "$(poly "$W/rc2")" = "$(poly "$W/rr")" ] || fail "F: restic's polynomial was not copied"
[ "$(poly "$W/rc2")" != "$(poly "$W/rl")" ] || fail "F: two random polynomials are equal?"
run_ok hv -r "$W/rc2" backup "$W/six"
run_ok r -r "$W/rr" backup "$W/six"
run_ok hv -r "$W/rc2" ls latest
blobs() { r -r "$1" list blobs | grep "^data" | sort; }
[ "$(blobs "$W/rc2")" = "$(blobs "$W/rr")" ] || fail "F: the same file gave different data blobs"
expect_exit 1 hv -r "$W/rc3" init --copy-chunker-params
assert_grep "source repository" "$ERR" "F: no message without a source"
run_ok r -r "$W/rc2" check --read-data

pass
