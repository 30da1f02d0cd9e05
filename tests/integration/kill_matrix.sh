#!/usr/bin/env bash
# kill -9 at many points of every command that changes a repository (RELIABILITY.md cases
# 13 and 15): backup, forget --prune, key add / passwd / remove, repair index and repair
# snapshots --forget. HAVEN_DEBUG_KILL_AFTER_OPS=N makes haven SIGKILL itself at its
# (N+1)th save or remove of a non-lock file (docs/cli.md); each command's calls are
# counted on a copy first, and it is killed at the start, after each of the first calls,
# in the middle and before the last one. Backups are also killed by time (SIGKILL after
# 0.2-1.5 s of a larger backup). After each kill:
#   * the stale lock is removed by `unlock` (its PID is dead);
#   * haven check and restic 0.14 check are clean (unreferenced packs are allowed);
#   * every snapshot restores byte-identical to the checksums recorded when it was made;
#   * a password that opened the repository before still opens it (key commands: the old
#     or the new one for passwd);
#   * the command run again completes, and check --read-data is clean afterwards.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../tools/lib.sh
source "$(dirname "$0")/../tools/lib.sh"
setup "$@"
need_restic
need_haven
need_python

SRC="$W/src"
mkdir -p "$W/sums"
# generation G: a stable part, and files that change with G
generation() {
  write_generation "$SRC" "$1" 20 30 $((600 << 10)) $((200 << 10))
  (cd "$SRC" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum) >"$W/sums/gen$1"
}
listing() { repo_listing "$1"; }

# verify REPO: the repository is consistent and every snapshot restores as recorded.
verify() {
  local repo="$1" what="$2"
  run_ok hv -r "$repo" unlock
  [ -z "$(lock_files "$repo/locks")" ] || fail "$what: a lock is left after unlock"
  run_ok hv -r "$repo" check
  run_ok r -r "$repo" check
  run_ok hv -r "$repo" snapshots --json
  python3 -c 'import json,sys
for s in json.load(open(sys.argv[1])): print(s["id"], (s.get("tags") or ["none"])[0])' "$OUT" \
    >"$W/snaps"
  [ -s "$W/snaps" ] || fail "$what: no snapshot left"
  while read -r id tag; do
    rm -rf "$W/restore"
    run_ok hv -r "$repo" restore "$id:$SRC" --target "$W/restore"
    (cd "$W/restore" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum) >"$W/got"
    diff -q "$W/got" "$W/sums/$tag" >/dev/null || fail "$what: snapshot $id ($tag) does not restore as recorded"
  done <"$W/snaps"
}

# calls_of REPO CMD...: how many saves/removes CMD makes on a copy of REPO.
calls_of() {
  local repo="$1"; shift
  rm -rf "$W/count"; cp -a "$repo" "$W/count"
  listing "$W/count" | awk '{print $2}' >"$W/before"
  run_ok hv -r "$W/count" "$@"
  listing "$W/count" | awk '{print $2}' >"$W/after"
  echo $(( $(comm -13 "$W/before" "$W/after" | wc -l) + $(comm -23 "$W/before" "$W/after" | wc -l) ))
}

# points TOTAL: kill points 0, 1, 2, the middle, TOTAL-1.
points() { printf '%s\n' 0 1 2 $(($1 / 2)) $(($1 - 1)) | awk -v t="$1" '$1 < t' | sort -nu; }

BASE="$W/base"
run_ok hv -r "$BASE" init --scrypt 1024,8,1
for g in 1 2 3; do
  generation "$g"
  run_ok hv -r "$BASE" backup --tag "gen$g" "$SRC"
done
run_ok r -r "$BASE" check --read-data
generation 4

# kill_cmd NAME PREPARE-FN CHECK-FN CMD...: the kill matrix for one command.
kill_cmd() {
  local name="$1" prep="$2" after="$3"; shift 3
  rm -rf "$W/prep"; cp -a "$BASE" "$W/prep"; "$prep" "$W/prep"
  local total; total=$(calls_of "$W/prep" "$@")
  log "$name makes $total saves/removes"
  [ "$total" -ge 1 ] || fail "$name: changes nothing, the matrix would test nothing"
  for n in $(points "$total"); do
    check "$name killed after $n of $total calls"
    local K="$W/k-$name-$n"
    rm -rf "$K"; cp -a "$W/prep" "$K"
    HAVEN_DEBUG_KILL_AFTER_OPS=$n expect_exit 137 hv -r "$K" "$@"
    "$after" "$K" "$name/$n"
    verify "$K" "$name/$n"
    run_ok hv -r "$K" "$@"   # the command again, to its end
    run_ok hv -r "$K" check --read-data
    rm -rf "$K"
  done
}

nothing() { :; }
forget_first() { hv -r "$1" forget --keep-last 2 >/dev/null; }
damage_pack() {  # the largest pack goes; the index is rebuilt without it
  rm -f "$(find "$1/data" -type f -printf '%s %p\n' | sort -n | tail -n 1 | cut -d' ' -f2)"
  hv -r "$1" repair index >/dev/null
}
echo other-password >"$W/pw-other"
old_pw_opens() {
  run_ok hv -r "$1" unlock
  run_ok hv -r "$1" snapshots
}
either_pw_opens() {
  hv -r "$1" unlock >/dev/null 2>&1 || true
  if ! hv -r "$1" snapshots >/dev/null 2>&1; then
    HAVEN_PASSWORD=other-password RESTIC_PASSWORD=other-password \
      "$HAVEN" --cache-dir "$HAVEN_CACHE_DIR" -r "$1" snapshots >/dev/null \
      || fail "$2: neither the old nor the new password opens the repository"
    # continue the checks with the new password
    export HAVEN_PASSWORD=other-password RESTIC_PASSWORD=other-password
  fi
}
add_other_key() { hv -r "$1" key add --new-password-file "$W/pw-other" >/dev/null; }
other_key_id() {
  HAVEN_PASSWORD=other-password "$HAVEN" --no-cache -r "$1" key list --json \
    | python3 -c 'import json,sys; print([k["id"] for k in json.load(sys.stdin) if k["current"]][0])'
}

kill_cmd backup nothing nothing backup --tag gen4 "$SRC"
kill_cmd forget-prune nothing nothing forget --keep-last 2 --prune
kill_cmd prune forget_first nothing prune --max-unused 0
kill_cmd key-add nothing old_pw_opens key add --new-password-file "$W/pw-other"
# key passwd makes one save (the new key) and one remove (the old one).
check "key passwd killed before its first call"
K="$W/k-passwd-0"; rm -rf "$K"; cp -a "$BASE" "$K"
HAVEN_DEBUG_KILL_AFTER_OPS=0 expect_exit 137 hv -r "$K" key passwd --new-password-file "$W/pw-other"
old_pw_opens "$K"
check "key passwd killed after 1 call (new key saved, old not removed yet)"
K="$W/k-passwd-1"; rm -rf "$K"; cp -a "$BASE" "$K"
HAVEN_DEBUG_KILL_AFTER_OPS=1 expect_exit 137 hv -r "$K" key passwd --new-password-file "$W/pw-other"
( either_pw_opens "$K" "passwd/1"; verify "$K" "passwd/1" )
run_ok env HAVEN_PASSWORD=other-password "$HAVEN" --cache-dir "$HAVEN_CACHE_DIR" -r "$K" snapshots
# key remove: the repository has a second key; removing it is killed before the remove
rm -rf "$W/k-remove"; cp -a "$BASE" "$W/k-remove"; add_other_key "$W/k-remove"
OTHER=$(other_key_id "$W/k-remove")
HAVEN_DEBUG_KILL_AFTER_OPS=0 expect_exit 137 hv -r "$W/k-remove" key remove "$OTHER"
old_pw_opens "$W/k-remove"
run_ok env HAVEN_PASSWORD=other-password "$HAVEN" --no-cache -r "$W/k-remove" snapshots
verify "$W/k-remove" "key remove/0"
run_ok hv -r "$W/k-remove" key remove "$OTHER"

kill_cmd repair-index nothing nothing repair index --read-all-packs

# repair snapshots --forget on a repository that lost a pack: killed, then run again, the
# repository must check clean (what is restorable must restore; snapshots that lost data
# are rewritten, so their checksums are not compared).
check "repair snapshots --forget killed at each call"
rm -rf "$W/rs"; cp -a "$BASE" "$W/rs"; damage_pack "$W/rs"
total=$(calls_of "$W/rs" repair snapshots --forget)
log "repair snapshots --forget makes $total saves/removes"
[ "$total" -ge 2 ] || fail "repair snapshots changed too little ($total)"
for n in $(points "$total"); do
  K="$W/k-rs-$n"; rm -rf "$K"; cp -a "$W/rs" "$K"
  HAVEN_DEBUG_KILL_AFTER_OPS=$n expect_exit 137 hv -r "$K" repair snapshots --forget
  run_ok hv -r "$K" unlock
  run_ok hv -r "$K" repair snapshots --forget
  run_ok hv -r "$K" check --read-data
  run_ok r -r "$K" check --read-data
  rm -rf "$K"
done

# Backups killed by time (SIGKILL from outside, at moments no call count chooses).
check "backup killed by time"
T="$W/timed"; rm -rf "$T"; cp -a "$BASE" "$T"
gen_bytes 21 60000000 >"$SRC/gen/large.bin"
(cd "$SRC" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum) >"$W/sums/gen5"
for delay in 0.2 0.5 0.9 1.5; do
  "$HAVEN" --cache-dir "$HAVEN_CACHE_DIR" -r "$T" backup --tag gen5 "$SRC" >/dev/null 2>&1 &
  HP=$!; bg_track "$HP"
  sleep "$delay"
  kill -KILL "$HP" 2>/dev/null || true
  rc=0; wait "$HP" || rc=$?
  [ "$rc" = 137 ] || [ "$rc" = 0 ] || fail "timed kill after ${delay}s: exit $rc"
  verify "$T" "timed/$delay"
done
run_ok hv -r "$T" backup --tag gen5 "$SRC"
verify "$T" "timed/final"
run_ok r -r "$T" check --read-data

pass
