#!/usr/bin/env bash
# haven on rest: through tests/tools/fault-proxy.py between haven and `rclone serve restic`:
# every 8th request gets a fault, the kinds in turn (500/503 bursts of 3, a reset mid-body, a
# truncated body, a reply lost after the server acted, 429). init, backup, restore, check
# --read-data and forget --prune all succeed through retries; the faults really happened;
# the restore is identical; restic check --read-data (directly, no proxy) is clean.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../tools/lib.sh
source "$(dirname "$0")/../tools/lib.sh"
# shellcheck source-path=SCRIPTDIR source=../tools/rest_lib.sh
source "$(dirname "$0")/../tools/rest_lib.sh"
setup "$@"
need_restic
need_haven
need_python
rest_setup
CMD_TIMEOUT=180
rest_start faults

python3 "$TOOLS/fault-proxy.py" --upstream "$REST_URL" --port-file "$W/proxy-port" \
  --every 8 --burst 3 --kinds 500,reset,truncate,lost-reply,503,429 --log "$W/faults.log" &
bg_track $!
for _ in $(seq 50); do [ -s "$W/proxy-port" ] && break; sleep 0.1; done
[ -s "$W/proxy-port" ] || fail "the fault proxy did not start"
VIA="rest:http://127.0.0.1:$(cat "$W/proxy-port")/repo"
DIRECT="rest:${REST_URL}repo"

SRC="$W/src"
mkdir -p "$SRC/sub"
python3 - "$SRC" <<'PY'
import random, sys
r = random.Random(12)
open(sys.argv[1] + "/big.bin", "wb").write(r.randbytes(6000000))
for i in range(1, 121):
    open("%s/sub/f%d" % (sys.argv[1], i), "wb").write(r.randbytes(i * 997))
PY
ln -s sub/f1 "$SRC/link"

check "init and backup through the faulty proxy"
run_ok hv -r "$VIA" init
run_ok hv -r "$VIA" backup "$SRC"

check "restore through the faulty proxy is identical (cold cache)"
rm -rf "$HAVEN_CACHE_DIR"
run_ok hv -r "$VIA" restore latest --target "$W/target"
compare_trees "$SRC" "$W/target$SRC"

check "check --read-data through the faulty proxy"
run_ok hv -r "$VIA" check --read-data
assert_grep 'no errors were found' "$OUT"

check "forget --prune through the faulty proxy"
gen_bytes 2 3000000 >"$SRC/big.bin"
run_ok hv -r "$VIA" backup "$SRC"
run_ok hv -r "$VIA" forget --keep-last 1 --prune

check "the faults happened and were retried"
sort "$W/faults.log" | cut -d' ' -f1 | uniq -c | sed 's/^/    /'
for kind in 500 503 429 reset truncate lost-reply; do
  grep -q "^$kind " "$W/faults.log" || fail "no '$kind' fault was injected"
done
cat "$W"/err.* | grep -c 'retrying in' | { read -r n; [ "$n" -gt 5 ] || fail "only $n retries reported"; }

check "restic check --read-data (direct) is clean, the kept snapshot restores"
run_ok r -r "$DIRECT" check --read-data
assert_grep 'no errors were found' "$OUT"
run_ok r -r "$DIRECT" restore latest --target "$W/restic-target"
compare_trees "$SRC" "$W/restic-target$SRC" "${RESTIC_CMP[@]}"
assert_no_secrets

pass "backup, restore, check and prune over rest: survive injected faults"
