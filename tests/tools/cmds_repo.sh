# shellcheck shell=bash
# The repository the cmds_*.sh scripts (issue 14's commands) compare haven and restic on,
# sourced after lib.sh's setup/need_restic/need_haven.
#
# build_cmds_repo REPO SRC: haven init (cheap key parameters), then five snapshots of SRC, which changes between
# them: files added, removed, modified (small and multi-blob), a file that becomes a
# symlink and a directory that becomes a file, a chmod (metadata only), empty directories
# (the empty tree is shared), a hard link, the same content under two names, a file copied from an
# unchanged directory, two hosts and tags. Snapshot 5 is written by haven, the others by
# restic. Sets SNAPS (the ids in time order) and SNAP1..SNAP5.
build_cmds_repo() {
  local repo="$1" s="$2"
  mkdir -p "$s/a/b" "$s/c" "$s/empty1" "$s/d/empty2" "$s/keep/deep/er"
  printf 'one\n' >"$s/a/f1"
  printf 'two\n' >"$s/a/b/f2"
  gen_bytes 11 3000000 >"$s/c/big"
  printf 'same\n' >"$s/c/s1"
  printf 'same\n' >"$s/c/s1-twin"
  ln -s f1 "$s/a/l1"
  : >"$s/zero"
  gen_bytes 12 200000 >"$s/keep/deep/er/unchanged.bin"
  printf 'kept\n' >"$s/keep/k.txt"
  ln "$s/keep/k.txt" "$s/keep/k-hardlink.txt"
  touch -d '2021-03-04 05:06:07' "$s/keep/k.txt"
  # haven initialises with cheap key parameters: every command of the scripts derives the
  # key, and restic calibrates its own to half a second.
  run_ok hv -r "$repo" init --scrypt 1024,8,1
  run_ok r -r "$repo" backup --host h1 --tag t1 --time '2022-01-01 10:00:00' "$s"
  # 2: modify, remove, add (with content also found in an unchanged directory), chmod,
  #    type changes, an empty directory.
  printf 'changed\n' >>"$s/a/f1"
  rm "$s/a/b/f2"
  mkdir -p "$s/new/empty3"
  printf 'same\n' >"$s/new/s2"
  cp "$s/keep/deep/er/unchanged.bin" "$s/new/copy.bin"
  chmod 700 "$s/c/s1"
  rm "$s/a/l1"
  printf 'x\n' >"$s/a/l1"
  rm -r "$s/d"
  printf 'd\n' >"$s/d"
  gen_bytes 13 100000 >>"$s/c/big"
  run_ok r -r "$repo" backup --host h1 --tag t1,t2 --time '2022-01-02 10:00:00' "$s"
  # 3: another host; a whole directory goes, a file becomes a symlink again.
  rm -r "$s/a/b"
  rm "$s/a/l1"
  ln -s ../c/s1 "$s/a/l1"
  printf 'third\n' >"$s/third.txt"
  run_ok r -r "$repo" backup --host h2 --time '2022-01-03 10:00:00' "$s"
  # 4: by restic, a metadata touch and a file removed.
  touch -d '2022-02-02 02:02:02' "$s/third.txt"
  rm "$s/c/s1-twin"
  run_ok r -r "$repo" backup --host h2 --tag t3 --time '2022-01-05 10:00:00' "$s"
  # 5: by haven (now: the newest).
  printf 'by haven\n' >"$s/new/hv.txt"
  run_ok hv -r "$repo" backup --host h1 --tag t2 "$s"
  mapfile -t SNAPS < <(r -r "$repo" snapshots --json | python3 -c '
import json, sys
for s in sorted(json.load(sys.stdin), key=lambda s: s["time"]): print(s["id"])')
  [ "${#SNAPS[@]}" = 5 ] || fail "expected 5 snapshots, got ${#SNAPS[@]}"
  SNAP1=${SNAPS[0]} SNAP2=${SNAPS[1]} SNAP3=${SNAPS[2]} SNAP4=${SNAPS[3]} SNAP5=${SNAPS[4]}
  export SNAP1 SNAP2 SNAP3 SNAP4 SNAP5
}

# same_output WHAT CMD_ARGS...: `restic CMD_ARGS` and `haven CMD_ARGS` on the same
# repository give the same stdout and the same exit code.
same_output() {
  local what="$1"; shift
  local rc_r=0 rc_h=0
  r "$@" >"$W/same.r" 2>"$W/same.r.err" </dev/null || rc_r=$?
  hv "$@" >"$W/same.h" 2>"$W/same.h.err" </dev/null || rc_h=$?
  if [ "$rc_r" != "$rc_h" ] || ! cmp -s "$W/same.r" "$W/same.h"; then
    {
      echo "---- $what: restic $* (exit $rc_r) vs haven (exit $rc_h)"
      diff "$W/same.r" "$W/same.h" | head -n 60
      echo "---- restic stderr:"; tail -n 20 "$W/same.r.err"
      echo "---- haven stderr:"; tail -n 20 "$W/same.h.err"
    } >&2
    fail "$what: restic and haven differ"
  fi
}
