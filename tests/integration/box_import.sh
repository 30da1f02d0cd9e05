#!/usr/bin/env bash
# box add of one huge file, and the box's read side (docs/box.md §6, §7):
#   peak RSS of `box add` of a 1 GiB file stays under 256 MiB (the bound holds whatever
#     the file's size: the pipeline keeps a fixed number of chunks and packs in flight)
#   --jobs 1 and --jobs 2 store the same blobs for the same file (same tree, nothing added
#     by the second add)
#   HAVEN_IMPORT_TIMINGS=1 prints its one line (add, commit, read, prepare, write)
#   extract reads through the pool of read connections: the content is the source's
#   extract --no-permissions: same content, no stored owner or mode applied (defaults)
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../tools/lib.sh
source "$(dirname "$0")/../tools/lib.sh"
setup "$@"
need_haven
need_python
export HAVEN_BOX_KEY=7f1c0e5a9b3d2f4e6a8c0b1d3e5f7a9c2b4d6e8f0a1c3e5b7d9f1a3c5e7b9d0f

B="$W/i.hbox"
run_ok hv box create "$B"

# peak_rss_kib CMD...: runs CMD (stdout/stderr to $W/rss.out/.err), prints its peak RSS in KiB.
peak_rss_kib() {
  python3 -c 'import resource, subprocess, sys
with open(sys.argv[1] + ".out", "wb") as o, open(sys.argv[1] + ".err", "wb") as e:
    rc = subprocess.call(sys.argv[2:], stdout=o, stderr=e)
if rc != 0:
    sys.exit("exit %d from %s" % (rc, " ".join(sys.argv[2:])))
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$W/rss" "$@"
}

check "peak RSS of box add of a 1 GiB file is at most 256 MiB"
gen_bytes 7 $((1024 * 1024 * 1024)) >"$W/huge.bin"
rss=$(peak_rss_kib "$HAVEN" --cache-dir "$HAVEN_CACHE_DIR" box add "$B" "$W/huge.bin") \
  || { cat "$W/rss.err"; fail "box add of 1 GiB failed"; }
log "peak RSS $((rss / 1024)) MiB"
if rss_bound_applies "peak RSS of box add <= 256 MiB"; then
  [ "$rss" -le $((256 * 1024)) ] || fail "box add of 1 GiB: peak RSS $((rss / 1024)) MiB > 256 MiB"
fi
rm -f "$W/huge.bin"

check "--jobs 1 and --jobs 2 store the same blobs; HAVEN_IMPORT_TIMINGS prints one line"
python3 -c 'import random, sys
r = random.Random(5)
words = [bytes(r.choice(b"abcdefghij klmnop") for _ in range(8)) for _ in range(500)]
with open(sys.argv[1], "wb") as f:
    for block in range(24):  # 1 MiB of text lines, then 1 MiB of random bytes
        if block % 2:
            f.write(r.randbytes(1 << 20))
        else:
            out = bytearray()
            while len(out) < (1 << 20):
                out += b" ".join(r.choice(words) for _ in range(12)) + b"\n"
            f.write(out[:1 << 20])' "$W/mixed.bin"
run_ok hv --jobs 1 box add "$B" "$W/mixed.bin" /j1/mixed.bin
HAVEN_IMPORT_TIMINGS=1 run_ok hv --jobs 2 box add "$B" "$W/mixed.bin" /j2/mixed.bin
assert_grep '^import timings: add [0-9.]+s \| commit [0-9.]+s \(flush [0-9.]+, sqlite commit [0-9.]+, checkpoint [0-9.]+\) \| read [0-9.]+s \| prepare [0-9.]+ worker-s \(chunk [0-9.]+ hash [0-9.]+ compress [0-9.]+ seal [0-9.]+\) \| write [0-9.]+ worker-s$' "$ERR" "the import timings line"
[ "$(grep -c 'timings' "$ERR")" = 1 ] || fail "more than one timings line: $(cat "$ERR")"
export HAVEN_PASSWORD="$HAVEN_BOX_KEY"  # -r box:F takes the hex key as its password
run_ok hv -r "box:$B" --no-cache snapshots --json
root=$(python3 -c 'import json,sys
print(max(json.load(open(sys.argv[1])), key=lambda s: s["time"])["tree"])' "$OUT")
run_ok hv -r "box:$B" --no-cache cat tree "$root"
python3 -c 'import json, sys
nodes = {n["name"]: n for n in json.load(open(sys.argv[1]))["nodes"]}
a, b = nodes["j1"]["subtree"], nodes["j2"]["subtree"]
assert a == b, "jobs 1 and jobs 2 gave different trees: %s %s" % (a, b)' "$OUT" \
  || fail "--jobs 1 and --jobs 2 stored different content"

check "extract (pooled reads) gives the source's bytes"
run_ok hv --jobs 2 box extract "$B" /j2/mixed.bin --target "$W/ext"
cmp "$W/mixed.bin" "$W/ext/mixed.bin" || fail "extracted mixed.bin differs"

check "extract --no-permissions: same content, default modes, no stored owner"
P="$W/perm"
mkdir -p "$P/d"
printf 'secret\n' >"$P/d/f"
printf '#!/bin/sh\n' >"$P/d/run"
chmod 0600 "$P/d/f"
chmod 0750 "$P/d/run"
chmod 0711 "$P/d"
if [ "$(id -u)" = 0 ]; then chown 1234:1234 "$P/d/f"; fi
run_ok hv box add "$B" "$P" /perm
umask 022
run_ok hv box extract "$B" /perm --target "$W/np" --no-permissions
run_ok hv box extract "$B" /perm --target "$W/keep"
cmp "$P/d/f" "$W/np/perm/d/f" || fail "content differs with --no-permissions"
cmp "$P/d/run" "$W/np/perm/d/run" || fail "content differs with --no-permissions"
for want in "644 np/perm/d/f" "644 np/perm/d/run" "755 np/perm/d" \
            "600 keep/perm/d/f" "750 keep/perm/d/run" "711 keep/perm/d"; do
  got=$(stat -c %a "$W/${want#* }")
  [ "$got" = "${want%% *}" ] || fail "mode of ${want#* } is $got, want ${want%% *}"
done
[ "$(stat -c %u "$W/np/perm/d/f")" = "$(id -u)" ] || fail "--no-permissions set the stored owner"
if [ "$(id -u)" = 0 ]; then
  [ "$(stat -c %u "$W/keep/perm/d/f")" = 1234 ] || fail "the stored owner was not restored"
fi

log "ok"
