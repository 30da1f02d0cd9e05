#!/usr/bin/env bash
# restic writes, haven reads. For repository versions 1 and 2 and compression auto/off/max:
#   restic init --repository-version V; restic backup --compression C (two snapshots, the
#   second with a tag and another host)
#   -> haven restore SNAP --target T: identical to the source by compare_trees
#      (restic < 0.16 stored the non-UTF-8 symlink target lossily: restic_compare_flags)
#   -> haven check --read-data: exit 0
#   -> haven ls latest lists the same paths as restic ls latest
#   -> haven snapshots --json agrees with restic snapshots --json (ids, trees, paths, ...)
# (restic 0.14 accepts --compression with a v1 repository and stores everything
#  uncompressed; the v1 runs check that haven reads v1's unversioned format.)
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../tools/lib.sh
source "$(dirname "$0")/../tools/lib.sh"
setup "$@"
need_restic
need_haven
need_python

SRC="$W/src"
make_tree "$SRC"
# shellcheck disable=SC2207

for V in 1 2; do
  for C in auto off max; do
    REPO="$W/repo-v$V-$C"
    check "repository version $V, compression $C: restic init + 2 backups"
    run_ok r -r "$REPO" init --repository-version "$V"
    run_ok r -r "$REPO" backup --compression "$C" "$SRC"
    run_ok r -r "$REPO" backup --compression "$C" --tag second --host other-host "$SRC"
    run_ok r -r "$REPO" snapshots --json
    cp "$OUT" "$W/restic-snaps.json"
    FIRST="$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(s[0]["id"])' "$W/restic-snaps.json")"

    check "v$V/$C: haven snapshots --json agrees with restic"
    run_ok hv -r "$REPO" snapshots --json
    cp "$OUT" "$W/haven-snaps.json"
    python3 "$TOOLS/compare_snapshots_json.py" "$W/restic-snaps.json" "$W/haven-snaps.json" \
      || fail "v$V/$C: snapshots --json differ"

    check "v$V/$C: haven restore $FIRST (full id) is identical to the source"
    run_ok hv -r "$REPO" restore "$FIRST" --target "$W/t-v$V-$C"
    compare_trees "$SRC" "$W/t-v$V-$C$SRC" "${RESTIC_CMP[@]}"
    rm -rf "$W/t-v$V-$C"

    check "v$V/$C: haven check --read-data exits 0"
    run_ok hv -r "$REPO" check --read-data

    check "v$V/$C: haven ls latest lists the same paths as restic ls latest"
    run_ok r -r "$REPO" ls latest
    sorted_ls_paths "$OUT" >"$W/restic-ls.txt"
    run_ok hv -r "$REPO" ls latest
    sorted_ls_paths "$OUT" >"$W/haven-ls.txt"
    [ "$(wc -l <"$W/restic-ls.txt")" -gt 50 ] || fail "restic ls printed too few paths"
    diff -u "$W/restic-ls.txt" "$W/haven-ls.txt" >"$W/ls.diff" \
      || { cat -v "$W/ls.diff" | head -40; fail "v$V/$C: restic ls and haven ls differ"; }

    check "v$V/$C: no lock left behind; restic check still clean"
    [ -z "$(ls -A "$REPO/locks")" ] || fail "locks/ not empty: $(ls "$REPO/locks")"
    run_ok r -r "$REPO" check
    rm -rf "$REPO"
  done
done

pass "haven reads restic $RESTIC_VERSION repositories (v1, v2; compression auto/off/max)"
