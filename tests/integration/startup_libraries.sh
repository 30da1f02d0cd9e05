#!/usr/bin/env bash
# libcurl is loaded at the first HTTP request and libarchive when dump writes an archive, not
# at process start (backend/curl_library.h, cli/archive_library.h):
#   A. the haven binary lists neither among the libraries it needs (readelf);
#   B. a command on a local repository never loads them (LD_DEBUG=libs), and a box neither;
#   C. a rest: repository loads libcurl and speaks HTTP through it: against a plain HTTP
#      server on loopback that has no repository, haven reports that no repository is there;
#   D. dump --archive tar and zip load libarchive and write archives tar and unzip read.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../tools/lib.sh
source "$(dirname "$0")/../tools/lib.sh"
setup "$@"
need_haven
need_python
need_cmd readelf binutils

check "A. libcurl and libarchive are not NEEDED libraries of the binary"
readelf -d "$HAVEN" >"$W/dyn"
assert_grep 'NEEDED.*libc\.so' "$W/dyn" "readelf shows no NEEDED entries"
if grep -qE 'NEEDED.*(libcurl|libarchive)' "$W/dyn"; then
  fail "A: $HAVEN links at start: $(grep -E 'libcurl|libarchive' "$W/dyn")"
fi

check "B. local repository and box commands never load libcurl"
run_ok hv -r "$W/repo" init --scrypt 1024,8,1
mkdir -p "$W/src" && echo data >"$W/src/f"
run_ok env LD_DEBUG=libs "$HAVEN" --cache-dir "$HAVEN_CACHE_DIR" -r "$W/repo" backup "$W/src"
if grep -qE 'libcurl|libarchive' "$ERR"; then
  fail "B: a local backup loaded: $(grep -m3 -E 'libcurl|libarchive' "$ERR")"
fi
run_ok env LD_DEBUG=libs "$HAVEN" box create "$W/b.hbox" --key "$(printf '%064d' 5)"
if grep -qE 'libcurl|libarchive' "$ERR"; then fail "B: box create loaded libcurl or libarchive"; fi

check "C. a rest: repository loads libcurl at its first request"
mkdir -p "$W/www"
PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
python3 -m http.server --bind 127.0.0.1 --directory "$W/www" "$PORT" >"$W/http.log" 2>&1 &
bg_track $!
for _ in $(seq 1 100); do
  python3 -c "import socket; socket.create_connection(('127.0.0.1', $PORT), 1)" 2>/dev/null && break
  sleep 0.1
done
# restic's exit code 10 (no repository), or 1 before restic 0.17's codes: either way the
# message says the repository is missing, which only an HTTP answer (404) can tell.
rc=0
env LD_DEBUG=libs "$HAVEN" --cache-dir "$HAVEN_CACHE_DIR" -r "rest:http://127.0.0.1:$PORT/" \
  snapshots >"$W/c.out" 2>"$W/c.err" </dev/null || rc=$?
[ "$rc" != 0 ] || fail "C: snapshots of an empty REST server succeeded"
assert_grep 'calling init: .*libcurl\.so' "$W/c.err" "C: libcurl was not loaded for rest:"
grep -v '^ *[0-9]*:' "$W/c.err" >"$W/c.msg" || true
assert_grep '[Dd]oes not exist|[Nn]o repository|[Nn]ot found' "$W/c.msg" "C: no clear 'no repository' error"
assert_grep '"(GET|HEAD) /config' "$W/http.log" "C: the server saw no request for /config"

check "D. dump --archive loads libarchive; tar and zip read what it wrote"
need_cmd unzip unzip
run_ok env LD_DEBUG=libs "$HAVEN" --cache-dir "$HAVEN_CACHE_DIR" -r "$W/repo" snapshots
if grep -q 'libarchive' "$ERR"; then fail "D: snapshots loaded libarchive"; fi
hv -r "$W/repo" dump latest "$W/src" >"$W/d.tar" || fail "D: dump (tar) failed"
tar -tf "$W/d.tar" >"$W/d.tar.list" || fail "D: tar cannot read the dump"
assert_grep 'src/f$' "$W/d.tar.list" "D: f is not in the tar archive"
hv -r "$W/repo" dump --archive zip latest "$W/src" >"$W/d.zip" || fail "D: dump (zip) failed"
unzip -p "$W/d.zip" "${W#/}/src/f" >"$W/d.f" || fail "D: unzip cannot read the dump"
[ "$(cat "$W/d.f")" = data ] || fail "D: f's content in the zip archive: $(cat "$W/d.f")"
pass
