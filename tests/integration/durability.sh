#!/usr/bin/env bash
# Durability of the write protocol (RELIABILITY.md cases 14 and 15): under strace, every
# object haven writes is fsync'ed as a temp file, renamed, and its folder fsync'ed before
# anything that depends on it (pack -> index -> snapshot), and nothing is deleted before
# its replacement is durable (prune, key passwd). tests/tools/check_durability.py reads
# the trace; a trace with the folder fsyncs taken out must fail the same checker (the test
# can fail). Commands traced: init, backup (several packs), a second backup, forget +
# prune with a repack, key passwd, repair index.
# Power cuts (case 14): for both backups and the prune, tests/tools/power_cut.py rebuilds
# the repository as it would be after a power loss at several points of the trace (only
# renames whose folder fsync came before the cut survive), and haven check and restic
# check must find every such repository consistent: no snapshot references a lost object.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../tools/lib.sh
source "$(dirname "$0")/../tools/lib.sh"
setup "$@"
need_restic
need_haven
need_python
need_cmd strace strace

R="$W/repo"
SRC="$W/src"
mkdir -p "$SRC/small"
gen_bytes 11 40000000 >"$SRC/big.bin"
for i in $(seq 1 200); do echo "small file $i" >"$SRC/small/f$i"; done

# traced NAME ARGS...: run haven ARGS under strace (repository $R, no cache), then check.
traced() {
  local name="$1"; shift
  rm -rf "$W/pre-$name"
  [ ! -d "$R" ] || cp -al "$R" "$W/pre-$name"
  # LeakSanitizer cannot run under ptrace (it stops the process to scan it): no leak check
  # for the traced runs of an ASan build; every other test checks leaks.
  ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" run_ok strace -f -y -qq -o "$W/$name.trace" \
    -e trace=fsync,fdatasync,rename,renameat,renameat2,link,linkat,unlink,unlinkat \
    "$HAVEN" --no-cache -r "$R" "$@"
  python3 "$TOOLS/check_durability.py" "$W/$name.trace" "$R" >"$W/$name.check" \
    || { cat "$W/$name.check"; fail "$name: write protocol violated"; }
  log "$name: $(cat "$W/$name.check")"
}

# power_cuts NAME: the repository after a power loss at points of NAME's trace, checked.
power_cuts() {
  local name="$1" cut n=0
  python3 "$TOOLS/power_cut.py" "$W/$name.trace" "$W/pre-$name" "$R" "$W/cuts-$name" --cuts 8 \
    >"$W/$name.cuts" || { cat "$W/$name.cuts"; fail "$name: power_cut.py failed"; }
  for cut in "$W/cuts-$name"/cut-*; do
    run_ok hv --no-cache -r "$cut" check
    run_ok r --no-cache -r "$cut" check
    n=$((n + 1))
  done
  [ "$n" -ge 4 ] || fail "$name: only $n cut points: the test checks little"
  log "$name: $n power cuts checked by haven and restic ($(head -c 300 "$W/$name.cuts" | tr '\n' ';'))"
}

traced init init --scrypt 1024,8,1
traced backup1 backup "$SRC"
grep -q "pack" "$W/backup1.check" || fail "backup1 wrote no pack?"
power_cuts backup1
# The power cuts of backup1's trace without its pack folder fsyncs must lose packs that
# the index still names (the cut test can fail).
grep -v 'fsync([0-9]*</[^>]*/data/[0-9a-f][0-9a-f]>)' "$W/backup1.trace" >"$W/nodirsync.trace"
python3 "$TOOLS/power_cut.py" "$W/nodirsync.trace" "$W/pre-backup1" "$R" "$W/cuts-nodirsync" \
  --cuts 8 >/dev/null || fail "power_cut.py failed on the trace without pack folder fsyncs"
broken=0
for cut in "$W/cuts-nodirsync"/cut-*; do
  "$HAVEN" --no-cache -r "$cut" check >"$W/cut.out" 2>&1 \
    || { grep -q "does not exist" "$W/cut.out" || fail "power cut $cut: $(cat "$W/cut.out")"
         broken=$((broken + 1)); }
done
[ "$broken" -gt 0 ] || fail "no power cut of a trace without pack folder fsyncs lost data: the cut test cannot fail"
log "without pack folder fsyncs, $broken of 8 power cuts lose packs the index names (as they must)"
gen_bytes 12 5000000 >"$SRC/big.bin"
traced backup2 backup "$SRC"
power_cuts backup2
run_ok hv -r "$R" snapshots --json
first=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[0]["id"])' "$OUT")
run_ok hv -r "$R" forget "$first"
traced prune prune --max-unused 0
grep -Eq "[1-9][0-9]* deletions" "$W/prune.check" || fail "prune deleted nothing: the test checks nothing"
power_cuts prune
echo new-password >"$W/newpw"
traced passwd key passwd --new-password-file "$W/newpw"
export HAVEN_PASSWORD=new-password RESTIC_PASSWORD=new-password
traced repair repair index

# The checker must catch a missing folder fsync and a missing file fsync.
grep -v 'fsync([0-9]*</[^>]*/data/[0-9a-f][0-9a-f]>)' "$W/backup1.trace" >"$W/nodirsync.trace"
if python3 "$TOOLS/check_durability.py" "$W/nodirsync.trace" "$R" >/dev/null; then
  fail "the checker accepted a trace without pack folder fsyncs"
fi
grep -v 'fsync([0-9]*<[^>]*/index/[^>]*-tmp-' "$W/backup1.trace" >"$W/nofilesync.trace"
if python3 "$TOOLS/check_durability.py" "$W/nofilesync.trace" "$R" >/dev/null; then
  fail "the checker accepted a trace without an index file fsync"
fi

run_ok hv -r "$R" check --read-data
run_ok r -r "$R" check --read-data
pass
