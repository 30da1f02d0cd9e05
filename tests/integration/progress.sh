#!/usr/bin/env bash
# Progress output: restic-style JSON status lines with --json (backup and restore), a
# status line redrawn in place on a terminal (run under `script` for a pty), and nothing
# when stdout is neither a terminal nor --json.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../tools/lib.sh
source "$(dirname "$0")/../tools/lib.sh"
setup "$@"
need_haven
need_python
need_cmd script bsdutils

mkdir -p "$W/src/d"
gen_bytes 1 $((48 << 20)) > "$W/src/big.bin"
for i in $(seq 1 200); do echo "file $i" > "$W/src/d/f$i"; done
REPO="$W/repo"
run_ok hv -r "$REPO" init --scrypt 1024,8,1
export HAVEN_PROGRESS_FPS=60

check "backup --json: status lines, then the summary; counters only grow; totals are the tree's"
run_ok hv -r "$REPO" --json backup "$W/src"
python3 - "$OUT" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
status = [l for l in lines if l["message_type"] == "status"]
assert lines[-1]["message_type"] == "summary", lines[-1]
assert status, "no status line"
prev = 0
for s in status:
    for k in ("seconds_elapsed", "percent_done", "total_files", "files_done", "total_bytes",
              "bytes_done", "error_count"):
        assert k in s, (k, s)
    assert s["bytes_done"] >= prev, status
    prev = s["bytes_done"]
    assert 0 <= s["percent_done"] <= 1, s
final = [s for s in status if s["total_files"] == 201]
assert final, "the scanner never counted 201 files: %r" % status[-1]
last = status[-1]  # printed when the backup is done, whatever the timing
assert last["files_done"] == 201 and last["percent_done"] == 1, last
assert last["bytes_done"] == last["total_bytes"], last
assert final[-1]["total_bytes"] == (48 << 20) + sum(len("file %d\n" % i) for i in range(1, 201)), final[-1]
print("%d status lines, last %r" % (len(status), status[-1]))
PY

check "no status output when stdout is a pipe and --json is off"
run_ok hv -r "$REPO" backup --force "$W/src"
if LC_ALL=C grep -aq $'\r' "$OUT" || grep -aq '"message_type"' "$OUT"; then
  fail "status output on a pipe: $(head -c 300 "$OUT")"
fi

check "terminal: a status line redrawn in place"
script -qefc "$HAVEN --cache-dir $HAVEN_CACHE_DIR -r $REPO backup --force $W/src" "$W/typescript" >/dev/null </dev/null
assert_grep $'\r\x1b\\[K\\[0:[0-9]{2}\\] [0-9.]+%  [0-9]+ files' "$W/typescript" "no status line on the terminal"
assert_grep 'snapshot [0-9a-f]{8} saved' "$W/typescript"

check "restore --json: status lines with files_restored/bytes_restored"
run_ok hv -r "$REPO" --json restore latest --target "$W/restored"
python3 - "$OUT" <<'PY'
import json, sys
status = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
summary = status[-1]
assert summary["message_type"] == "summary" and summary["files_restored"] == 201 and \
    summary["bytes_restored"] == summary["total_bytes"], summary
status = [s for s in status if s.get("message_type") == "status"]
assert status, "no restore status line"
# Totals grow while the restore plans (as restic's), so a slow run (make tsan) may print a
# line before they are complete: never above the tree's, never shrinking.
prev = 0
for s in status:
    assert "files_restored" in s and "bytes_restored" in s and prev <= s["total_files"] <= 201, s
    prev = s["total_files"]
assert status[-1]["total_files"] == 201, status[-1]
assert status[-1]["files_restored"] == 201 and status[-1]["percent_done"] == 1, status[-1]
print("%d restore status lines, last %r" % (len(status), status[-1]))
PY
cmp "$W/src/big.bin" "$W/restored$W/src/big.bin"
pass
