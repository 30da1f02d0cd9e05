#!/usr/bin/env bash
# Key derivation side by side: every command that opens a repository derives its key with
# the repository's scrypt parameters (restic's calibration: N=32768, r=8, p of 7 or 8 on
# these machines), so this is the fixed cost of `snapshots`, `ls`, `cat config`, ...
# Times `cat config` on one repository made by `restic init`, alternating restic 0.14,
# haven (AVX-512 ROMix where the CPU has it) and haven with HAVEN_KDF_NO_AVX512=1 (the SSE2
# ROMix), median of N rounds each, and prints the ratios and the load average. Not part of
# `make test`.
#
#   bench/kdf.sh [--haven BIN] [--rounds N] [--work DIR]
set -euo pipefail
HAVEN="$(pwd)/build/haven" ROUNDS=7 WORK="${TMPDIR:-/tmp}/haven-kdf-bench"
while [ $# -gt 0 ]; do
  case "$1" in
    --haven) HAVEN="$2"; shift 2 ;;
    --rounds) ROUNDS="$2"; shift 2 ;;
    --work) WORK="$2"; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
command -v restic >/dev/null || { echo "restic is missing (apt-get install restic)" >&2; exit 1; }
export RESTIC_PASSWORD=bench HAVEN_PASSWORD=bench
REPO="$WORK/repo"
if [ ! -f "$REPO/config" ]; then
  rm -rf "$WORK" && mkdir -p "$WORK"
  restic -r "$REPO" init -q >/dev/null
fi
python3 - "$HAVEN" "$REPO" "$ROUNDS" <<'PY'
import json, os, statistics, subprocess, sys, time
haven, repo, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
key = json.load(open(os.path.join(repo, "keys", sorted(os.listdir(os.path.join(repo, "keys")))[0])))
tools = [("restic", ["restic", "-r", repo, "cat", "config"], {}),
         ("haven", [haven, "-r", repo, "cat", "config"], {}),
         ("haven-sse2", [haven, "-r", repo, "cat", "config"], {"HAVEN_KDF_NO_AVX512": "1"})]
times = {name: [] for name, _, _ in tools}
load = os.getloadavg()
for _ in range(rounds):
    for name, argv, extra in tools:
        env = dict(os.environ, **extra)
        t0 = time.perf_counter()
        r = subprocess.run(argv, env=env, capture_output=True)
        t = time.perf_counter() - t0
        if r.returncode != 0:
            sys.exit(f"{name} failed: {r.stderr.decode()[-300:]}")
        times[name].append(t)
med = {k: statistics.median(v) for k, v in times.items()}
print(f"scrypt N={key['N']} r={key['r']} p={key['p']} (restic's calibration), {rounds} rounds, "
      f"load before {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}, after "
      + " ".join(f"{x:.2f}" for x in os.getloadavg()))
for k, v in med.items():
    print(f"{k:11s} cat config: median {v:.3f} s (min {min(times[k]):.3f}, max {max(times[k]):.3f})")
print(f"haven/restic {med['haven'] / med['restic']:.2f}, haven-sse2/restic "
      f"{med['haven-sse2'] / med['restic']:.2f}, haven/haven-sse2 {med['haven'] / med['haven-sse2']:.2f}")
PY
