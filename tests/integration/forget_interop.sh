#!/usr/bin/env bash
# forget: haven applies restic's retention policies exactly as restic does.
#   restic init + ~40 `restic backup --time ... --host ... --tag ...` snapshots of tiny
#   trees, spread over 2019-2021, two hosts, two paths, several tags, some taken with
#   TZ=America/New_York or TZ=Asia/Tokyo (so their times carry those offsets), ISO week
#   edges (Dec 31 / Jan 1 / Sundays) and a snapshot placed in the one-hour window where
#   restic 0.14's --keep-within depends on the local time zone's DST rules
#   -> for each policy: `restic forget --dry-run --json P` and `haven forget --dry-run
#      --json P` agree on every group's keep and remove sets, reasons and counters
#      (tests/tools/compare_forget.py); for a single group the text output is identical
#   -> refusals (no policy, bad duration, bad --group-by) behave alike
#   -> a real `haven forget` leaves exactly the kept snapshots (`restic snapshots`),
#      `haven forget ID` (and `forget --prune ID`) removes that snapshot, no lock is left
#      and `restic check` is clean.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../tools/lib.sh
source "$(dirname "$0")/../tools/lib.sh"
setup "$@"
need_restic
need_haven
need_python

REPO="$W/repo"
S1="$W/src1" S2="$W/src2"
mkdir -p "$S1" "$S2"
printf 'one\n' >"$S1/f"
printf 'two\n' >"$S2/g"

check "restic init + crafted snapshots"
run_ok r -r "$REPO" init
# TZ | local time (restic --time, interpreted in TZ) | host | tags | dirs (1, 2 or 12)
SCHEDULE='
UTC|2019-01-05 10:00:00|h1|a|1
UTC|2019-03-10 09:00:00|h1||1
America/New_York|2019-06-15 22:30:00|h1|a,b|1
UTC|2019-09-01 12:00:00|h2||1
UTC|2019-12-30 08:00:00|h1|keep|1
UTC|2019-12-31 23:30:00|h1||1
Asia/Tokyo|2020-01-01 05:00:00|h1||1
UTC|2020-01-01 00:30:00|h1|a|1
UTC|2020-01-03 10:00:00|h2|b|1
UTC|2020-01-05 18:00:00|h1||1
UTC|2020-01-06 07:00:00|h1||1
UTC|2020-02-29 12:00:00|h1|a|1
America/New_York|2020-03-08 01:30:00|h1||1
UTC|2020-05-15 10:00:00|h2||12
UTC|2020-07-01 10:00:00|h1||2
UTC|2020-07-01 10:30:00|h1||2
UTC|2020-07-01 11:10:00|h1|a|2
UTC|2020-07-02 09:00:00|h1||2
UTC|2020-11-15 10:00:00|h2|keep|1
UTC|2020-12-31 12:00:00|h1||1
UTC|2021-01-01 12:00:00|h1|b|1
UTC|2021-01-03 12:00:00|h1||1
UTC|2021-01-04 12:00:00|h1||1
America/New_York|2021-01-04 21:00:00|h1|a|1
UTC|2021-01-15 16:30:00|h1||1
UTC|2021-02-14 10:00:00|h2||1
UTC|2021-03-31 10:00:00|h1||1
UTC|2021-04-30 10:00:00|h1|a,b|1
UTC|2021-05-01 10:00:00|h1||1
America/New_York|2021-06-01 12:00:00|h1||1
UTC|2021-06-20 10:00:00|h1|keep|1
UTC|2021-06-25 10:00:00|h2||1
UTC|2021-06-26 10:00:00|h1||12
UTC|2021-06-28 10:00:00|h1||1
UTC|2021-06-29 03:00:00|h1||1
UTC|2021-06-29 04:00:00|h1||1
UTC|2021-06-29 04:59:00|h1|b|1
UTC|2021-06-30 08:00:00|h2|a|1
UTC|2021-07-10 10:00:00|h2|a|1
America/New_York|2021-07-15 12:00:00|h1||1
'
n=0
while IFS='|' read -r tz t host tags dirs; do
  [ -n "$tz" ] || continue
  args=(--time "$t" --host "$host")
  [ -z "$tags" ] || args+=(--tag "$tags")
  case "$dirs" in 1) args+=("$S1") ;; 2) args+=("$S2") ;; 12) args+=("$S1" "$S2") ;; esac
  TZ="$tz" r -r "$REPO" backup -q "${args[@]}" >/dev/null 2>"$W/backup.err" \
    || { cat "$W/backup.err" >&2; fail "restic backup ${args[*]} failed"; }
  n=$((n + 1))
done <<<"$SCHEDULE"
log "$n snapshots made"
run_ok r -r "$REPO" snapshots --json
python3 -c 'import json,sys; n=len(json.load(open(sys.argv[1]))); sys.exit(0 if n==int(sys.argv[2]) else 1)' \
  "$OUT" "$n" || fail "restic snapshots does not list $n snapshots"
grep -q -- '-04:00' "$OUT" || fail "expected snapshots with a -04:00 offset"
grep -q -- '+09:00' "$OUT" || fail "expected snapshots with a +09:00 offset"

# compare_policy NAME POLICY...: restic and haven dry runs (JSON) must agree.
compare_policy() {
  local name="$1"; shift
  check "policy $name: $*"
  run_ok r -r "$REPO" forget --dry-run --json "$@"
  cp "$OUT" "$W/r-$name.json"
  run_ok hv -r "$REPO" forget --dry-run --json "$@"
  cp "$OUT" "$W/h-$name.json"
  python3 "$TOOLS/compare_forget.py" "$W/r-$name.json" "$W/h-$name.json" >"$W/cmp.txt" \
    || { cat "$W/cmp.txt" >&2; fail "policy $name: restic and haven disagree"; }
  log "  $(cat "$W/cmp.txt")"
}

compare_policy last -l 5
compare_policy hourly --keep-hourly 10
compare_policy daily --keep-daily 7
compare_policy weekly --keep-weekly 6
compare_policy weekly-short -w 40
compare_policy monthly --keep-monthly 8
compare_policy yearly --keep-yearly 3
compare_policy within --keep-within 3m10d
compare_policy within-h --keep-within 14d12h
compare_policy keeptag-last --keep-tag keep --keep-last 2
compare_policy keeptag-lists --keep-tag 'a,b' --keep-tag '' --keep-weekly 1
compare_policy by-host --group-by host --keep-daily 3 --keep-weekly 2
compare_policy by-paths --group-by paths --keep-monthly 2
compare_policy no-groups --group-by '' --keep-last 3 --keep-yearly 5
compare_policy by-tags --group-by tags --keep-last 1
compare_policy by-all -g host,paths,tags -H 2 -d 2
compare_policy within-buckets --keep-within-daily 10d --keep-within-weekly 2m \
  --keep-within-monthly 1y --keep-within-yearly 5y --keep-within-hourly 2d
compare_policy filtered --host h1 --tag a --tag b --keep-last 2
compare_policy path-filter --path "$S2" -g '' --keep-daily 1
compare_policy combo -l 2 -H 3 -d 4 -w 3 -m 6 -y 2 --keep-within 2d --keep-tag keep

# restic 0.14 parses a snapshot time whose offset matches the local zone into time.Local,
# so --keep-within's month arithmetic follows the local DST rules: with TZ=America/New_York
# the 2021-01-15T16:30Z snapshot falls outside "6 months before 2021-07-15 12:00 EDT".
check "keep-within across DST: depends on TZ like restic 0.14"
for tz in UTC America/New_York; do
  TZ=$tz compare_policy "dst-$(echo "$tz" | tr / -)" --keep-within 6m -g host
done
python3 - "$W/r-dst-UTC.json" "$W/r-dst-America-New_York.json" <<'EOF' || fail "the DST probe did not behave as expected in restic"
import json, sys
def kept(p):
    return {s["time"] for g in json.load(open(p)) for s in (g["keep"] or [])}
utc, ny = kept(sys.argv[1]), kept(sys.argv[2])
probe = "2021-01-15T16:30:00Z"
sys.exit(0 if probe in utc and probe not in ny else 1)
EOF

check "text output is identical for a single group"
run_ok r -r "$REPO" forget --dry-run -g '' -l 4 -d 3 --keep-tag keep --keep-within-weekly 3m
cp "$OUT" "$W/r-text.txt"
run_ok hv -r "$REPO" forget --dry-run -g '' -l 4 -d 3 --keep-tag keep --keep-within-weekly 3m
diff -u "$W/r-text.txt" "$OUT" >"$W/text.diff" || { cat "$W/text.diff" >&2; fail "text output differs"; }
run_ok r -r "$REPO" forget --dry-run -g '' -c -y 1
cp "$OUT" "$W/r-text.txt"
run_ok hv -r "$REPO" forget --dry-run -g '' -c -y 1
diff -u "$W/r-text.txt" "$OUT" >"$W/text.diff" || { cat "$W/text.diff" >&2; fail "compact output differs"; }

check "no policy: nothing removed, same message, exit 0"
run_ok r -r "$REPO" forget
cp "$OUT" "$W/r-nopolicy.txt"
run_ok hv -r "$REPO" forget
diff -u "$W/r-nopolicy.txt" "$OUT" || fail "no-policy output differs"
assert_grep '^no policy was specified, no snapshots will be removed$' "$OUT"
run_ok hv -r "$REPO" forget --json
[ ! -s "$OUT" ] || fail "forget --json without a policy printed something"

check "bad arguments are refused before anything happens"
expect_exit 1 hv -r "$REPO" forget --keep-within 1x
assert_grep "invalid unit 'x' found after number 1" "$ERR"
expect_exit 1 hv -r "$REPO" forget -l 1 -g bogus
assert_grep "unknown grouping option: 'bogus'" "$ERR"
expect_exit 1 hv -r "$REPO" forget --keep-last -1
expect_exit 1 hv -r "$REPO" --no-lock forget -l 1
run_ok r -r "$REPO" snapshots --json
python3 -c 'import json,sys; sys.exit(0 if len(json.load(open(sys.argv[1])))==int(sys.argv[2]) else 1)' \
  "$OUT" "$n" || fail "a refused forget removed snapshots"

check "real forget with haven leaves exactly the kept set"
POLICY=(--keep-daily 4 --keep-monthly 6 --keep-tag keep)
run_ok r -r "$REPO" forget --dry-run --json "${POLICY[@]}"
cp "$OUT" "$W/r-real.json"
run_ok hv -r "$REPO" forget --json "${POLICY[@]}"
cp "$OUT" "$W/h-real.json"
python3 "$TOOLS/compare_forget.py" "$W/r-real.json" "$W/h-real.json" --ids-out "$W/kept.txt" \
  || fail "haven's real forget disagrees with restic's dry run"
[ -z "$(lock_files "$REPO/locks")" ] || fail "haven forget left a lock: $(ls "$REPO/locks")"
run_ok r -r "$REPO" snapshots --json
python3 -c 'import json,sys; print("\n".join(sorted(s["id"] for s in json.load(open(sys.argv[1])))))' \
  "$OUT" >"$W/after.txt"
diff -u "$W/kept.txt" "$W/after.txt" || fail "restic snapshots after haven forget != kept set"
log "$(wc -l <"$W/after.txt") of $n snapshots kept"

check "haven forget ID removes exactly that snapshot"
VICTIM="$(head -n 1 "$W/after.txt")"
run_ok r -r "$REPO" forget --dry-run "${VICTIM:0:8}"
cp "$OUT" "$W/r-id.txt"
run_ok hv -r "$REPO" forget --dry-run "${VICTIM:0:8}"
diff -u "$W/r-id.txt" "$OUT" || fail "forget --dry-run ID output differs"
run_ok hv -r "$REPO" forget "${VICTIM:0:8}"
run_ok r -r "$REPO" snapshots --json
python3 -c 'import json,sys; print("\n".join(sorted(s["id"] for s in json.load(open(sys.argv[1])))))' \
  "$OUT" >"$W/after2.txt"
grep -v "^$VICTIM\$" "$W/after.txt" >"$W/want2.txt" || true
diff -u "$W/want2.txt" "$W/after2.txt" || fail "forget ID removed the wrong snapshots"

check "haven forget --prune ID: snapshot gone, data pruned, repository consistent"
VICTIM2="$(head -n 1 "$W/after2.txt")"
run_ok hv -r "$REPO" forget --prune "$VICTIM2"
assert_grep '^1 snapshots have been removed, running prune$' "$OUT"
run_ok r -r "$REPO" snapshots --json
python3 -c 'import json,sys; ids={s["id"] for s in json.load(open(sys.argv[1]))}; sys.exit(1 if sys.argv[2] in ids else 0)' \
  "$OUT" "$VICTIM2" || fail "forget --prune did not remove $VICTIM2"

check "restic check is clean; haven reads the result"
run_ok r -r "$REPO" check
run_ok hv -r "$REPO" snapshots
[ -z "$(lock_files "$REPO/locks")" ] || fail "lock left behind"

pass "haven forget agrees with restic $RESTIC_VERSION on $n snapshots"
