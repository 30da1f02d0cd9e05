#!/usr/bin/env bash
# Large synthetic repository benchmark (issue 4; not part of make test).
#
#   bench/large-repo.sh [HAVEN_BINARY] [WORKDIR]
#
# 1. `haven debug gen-repo` builds a repository of ~5.2 M data blobs in ~260 k trees over
#    10 snapshots (GEN_ARGS overrides the generator flags), once, in WORKDIR/repo
#    (kept between runs; delete it to regenerate).
# 2. Runs, alternately, ROUNDS times (default 2) each:
#      haven debug used-blobs     (index load + used-blob walk alone, printed by haven)
#      haven prune --dry-run
#      restic prune --dry-run
#    with /usr/bin/time -v for wall time and peak RSS, on the same repository (dry runs
#    change nothing, so the copies are identical by construction).
# 3. Prints per command: median wall seconds, peak RSS, seconds and MiB per million
#    indexed blobs, and the haven/restic ratios.
# Environment: JOBS (haven --jobs, default 2), ROUNDS, GEN_ARGS.
set -euo pipefail
HAVEN="${1:-build/haven}"
case "$HAVEN" in /*) ;; *) HAVEN="$(pwd)/$HAVEN" ;; esac
WORK="${2:-/tmp/haven-large-repo}"
ROUNDS="${ROUNDS:-2}"
JOBS="${JOBS:-2}"
GEN_ARGS="${GEN_ARGS:---seed 1}"
export HAVEN_PASSWORD=large-repo-bench RESTIC_PASSWORD=large-repo-bench
REPO="$WORK/repo"
mkdir -p "$WORK"
command -v restic >/dev/null || { echo "restic is needed" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "/usr/bin/time is needed (apt-get install time)" >&2; exit 2; }

if [ ! -f "$REPO/config" ]; then
  echo "== generating $REPO ($GEN_ARGS)"
  "$HAVEN" -r "$REPO" init >/dev/null
  # shellcheck disable=SC2086
  /usr/bin/time -f "gen-repo: %e s wall, %M KiB peak RSS" "$HAVEN" --jobs "$JOBS" -r "$REPO" \
    debug gen-repo $GEN_ARGS | tail -n 1
fi

RES="$WORK/results.tsv"
: >"$RES"
# measure NAME CMD...: one timed run; appends "NAME wall_s rss_kib" to RES.
measure() {
  local name="$1"; shift
  local t="$WORK/time.$name"
  "$@" >"$WORK/out.$name" 2>"$t" || { echo "$name failed:" >&2; tail -n 20 "$t" >&2; exit 1; }
  local wall rss
  wall="$(awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,a,":"); s=0; for(i=1;i<=n;i++) s=s*60+a[i]; print s}' "$t")"
  rss="$(awk -F': ' '/Maximum resident set size/ {print $2}' "$t")"
  printf '%s\t%s\t%s\n' "$name" "$wall" "$rss" >>"$RES"
  printf '  %-22s %8.2f s %10.1f MiB\n' "$name" "$wall" "$(echo "$rss / 1024" | bc -l)"
}
T="/usr/bin/time -v"
for r in $(seq 1 "$ROUNDS"); do
  echo "== round $r"
  sync
  measure haven-used-blobs $T "$HAVEN" --no-cache --jobs "$JOBS" -r "$REPO" debug used-blobs
  grep -E '^(index|walk|peak)' "$WORK/out.haven-used-blobs" | sed 's/^/    /'
  measure haven-prune-dry-run $T "$HAVEN" --no-cache --jobs "$JOBS" -r "$REPO" prune --dry-run
  measure restic-prune-dry-run $T restic --no-cache -r "$REPO" prune --dry-run
done

BLOBS="$(awk '/^index:/ {print $2; exit}' "$WORK/out.haven-used-blobs")"
echo "== medians over $ROUNDS rounds, $BLOBS indexed blobs"
python3 - "$RES" "$BLOBS" <<'PY'
import statistics, sys
rows = [l.split('\t') for l in open(sys.argv[1]).read().splitlines() if l]
blobs = int(sys.argv[2]); mb = blobs / 1e6
med = {}
for name in dict.fromkeys(r[0] for r in rows):
    w = statistics.median(float(r[1]) for r in rows if r[0] == name)
    m = statistics.median(float(r[2]) for r in rows if r[0] == name)
    med[name] = (w, m)
    print(f"{name:22s} {w:8.2f} s  {m/1024:9.1f} MiB   {w/mb:6.2f} s/M blobs  "
          f"{m*1024/blobs:7.1f} B/blob peak")
h, r = med["haven-prune-dry-run"], med["restic-prune-dry-run"]
print(f"prune --dry-run haven/restic: time {h[0]/r[0]:.3f}, peak RSS {h[1]/r[1]:.3f}")
PY
