#!/usr/bin/env bash
# Secret-scanner throughput (issue 3): one thread, in memory, best of 3 rounds.
#   bench/scan-throughput.sh build/haven [WORKDIR]
# Writes a 512 MiB log-like text file and 256 MiB of random bytes (deterministic), then
# runs the hidden `haven scan --bench-throughput` on each: the random file once with the
# rules a binary file gets (key blocks) and once forced through every text rule.
set -euo pipefail
HAVEN="$(realpath "$1")"
W="${2:-$(mktemp -d /tmp/haven-scan-bench.XXXXXX)}"
mkdir -p "$W"
export HAVEN_CACHE_DIR="$W/cache"
if [ ! -s "$W/log.txt" ]; then
  python3 - "$W/log.txt" <<'PY'
import random, sys
r = random.Random(42)
levels = ["INFO", "DEBUG", "WARN", "ERROR"]
words = ("request user session cache miss hit backend upstream latency ms bytes sent "
         "received connection closed opened retry timeout GET POST /api/v1/items id=").split()
out = open(sys.argv[1], "w")
size, target, i = 0, 512 << 20, 0
while size < target:
    lines = []
    for _ in range(1000):
        i += 1
        ts = "2026-11-30T%02d:%02d:%02d.%03dZ" % (i // 3600000 % 24, i // 60000 % 60, i // 1000 % 60, i % 1000)
        msg = " ".join(r.choice(words) for _ in range(r.randint(6, 16)))
        lines.append("%s %s [%s] pid=%d %s status=%d took=%dms\n" % (
            ts, r.choice(levels), r.choice(["api", "db", "auth", "web"]), r.randint(100, 99999),
            msg, r.choice([200, 201, 404, 500]), r.randint(1, 5000)))
    chunk = "".join(lines)
    out.write(chunk)
    size += len(chunk)
PY
fi
[ -s "$W/random.bin" ] || head -c $((256 << 20)) /dev/urandom >"$W/random.bin"
echo "log (512 MiB text, every text rule):"
"$HAVEN" scan --bench-throughput "$W/log.txt"
echo "random (256 MiB, binary: key-block rules only):"
"$HAVEN" scan --bench-throughput "$W/random.bin"
echo "random (256 MiB, forced through every text rule):"
"$HAVEN" scan --bench-throughput "$W/random.bin" --bench-text
[ -n "${2:-}" ] || rm -rf "$W"
