#!/usr/bin/env bash
# The progress line on a terminal fits its width (drop-in issue): a backup run under a
# pseudo-terminal (script(1)) of 50 columns never prints a status segment longer than 49
# columns, one of 120 columns shows the full line (so the cut depends on the width), and
# output that is not a terminal has no status line at all. The width is read at every
# redraw (10 per second), so a resized terminal is followed within a tenth of a second.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../tools/lib.sh
source "$(dirname "$0")/../tools/lib.sh"
setup "$@"
need_haven
need_python
need_cmd script bsdutils

SRC="$W/src"
mkdir -p "$SRC"
gen_bytes 61 12000000 >"$SRC/big.bin"
run_ok hv -r "$W/repo" init --scrypt 1024,8,1

# under_tty COLS OUTFILE: a slow backup (--limit-upload, into a new repository) on a
# terminal of COLS columns.
under_tty() {
  local cmd
  run_ok hv -r "$W/repo$1" init --scrypt 1024,8,1
  cmd="stty cols $1 rows 24; RESTIC_PROGRESS_FPS=20 '$HAVEN' --cache-dir '$HAVEN_CACHE_DIR' -r '$W/repo$1' --limit-upload 4096 backup '$SRC'"
  script -qfec "$cmd" "$2" >/dev/null </dev/null || fail "backup under a terminal of $1 columns failed"
}
# segments FILE: the pieces between carriage returns and newlines, escapes removed.
longest_status() {
  python3 - "$1" <<'PY'
import re, sys
data = open(sys.argv[1], "rb").read().decode("utf-8", "replace")
data = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", data)
segs = [s for s in re.split(r"[\r\n]", data) if re.match(r"\[\d+:\d\d\]", s)]
print(len(segs), max((len(s) for s in segs), default=0))
PY
}

under_tty 50 "$W/narrow"
read -r n longest < <(longest_status "$W/narrow")
log "50 columns: $n status lines, the longest $longest"
[ "$n" -ge 2 ] || fail "no status line was drawn on the terminal"
[ "$longest" -le 49 ] || fail "a status line of $longest columns on a 50-column terminal"
under_tty 120 "$W/wide"
read -r n longest < <(longest_status "$W/wide")
log "120 columns: $n status lines, the longest $longest"
[ "$longest" -gt 50 ] || fail "the line is cut even on a wide terminal ($longest)"
run_ok hv -r "$W/repo" backup --force "$SRC"
if grep -q $'\r' "$OUT"; then fail "a status line was printed to a non-terminal"; fi
pass
