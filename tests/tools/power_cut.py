#!/usr/bin/env python3
"""Simulated power cuts from an strace log (tests/integration/durability.sh).

    power_cut.py TRACE PRE REPO OUT [--cuts N]

TRACE is the strace log of one haven command (same options as check_durability.py), PRE
a hard-link copy of the repository taken just before that command, REPO the repository
after it. For N cut points spread over the command's renames and deletions, writes
OUT/cut-NN/: the repository as a machine that lost power right then would find it,
assuming the worst the write protocol allows:

  * an object renamed into place survives only if its folder was fsync'ed after the
    rename and before the cut (otherwise the rename may be lost with the power);
  * an object deleted before the cut is gone;
  * temp files and locks are left out (a restart sees stale ones; check ignores them);
  * an object the command wrote and removed again (prune's interim index files) cannot be
    rebuilt (neither repository holds it): it counts as lost, which only makes the cut
    harsher (a missing index file can hide blobs, an extra one cannot).

Each cut folder is a repository the test then checks with haven and restic: no snapshot
may reference an object the cut lost. Prints one line per cut: "cut-NN CALL_INDEX what".
"""
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_durability import FD_PATH, STR, kind, parse  # noqa: E402


def events(calls, repo):
    """(index, 'rename'|'unlink', path) for repository objects, and when each renamed
    path's folder was first fsync'ed after its rename (durable_at)."""
    evs = []
    for i, (name, args, res) in enumerate(calls):
        if res != 0:
            continue
        if name in ("rename", "renameat", "renameat2", "link", "linkat"):
            s = STR.findall(args)
            if len(s) >= 2 and s[1].startswith(repo + "/") and kind(s[1], repo) not in (None, "lock"):
                evs.append((i, "rename", s[1]))
        elif name in ("unlink", "unlinkat"):
            s = STR.findall(args)
            if not s:
                continue
            p = s[-1]
            if name == "unlinkat":
                m = FD_PATH.search(args)
                if m and not p.startswith("/"):
                    p = m.group(1) + "/" + p
            if p.startswith(repo + "/") and "-tmp-" not in p and kind(p, repo) not in (None, "lock"):
                evs.append((i, "unlink", p))
    durable_at = {}
    for i, what, path in evs:
        if what != "rename":
            continue
        d = os.path.dirname(path)
        durable_at[path] = float("inf")
        for j in range(i + 1, len(calls)):
            name, args, res = calls[j]
            if name in ("fsync", "fdatasync") and res == 0:
                m = FD_PATH.search(args)
                if m and m.group(1).rstrip("/") == d:
                    durable_at[path] = j
                    break
    return evs, durable_at


def objects(root):
    """Relative paths of the repository objects under root (no temp files, no locks)."""
    out = set()
    for d, _, files in os.walk(root):
        for f in files:
            p = os.path.relpath(os.path.join(d, f), root)
            if "-tmp-" in f or p.startswith("locks/"):
                continue
            out.add(p)
    return out


def build_cut(pre, repo, out, cut, evs, durable_at):
    state = objects(pre)
    for i, what, path in evs:
        if i >= cut:
            break
        rel = os.path.relpath(path, repo)
        if what == "unlink":
            state.discard(rel)
        elif durable_at[path] < cut:
            state.add(rel)
    # Every folder of the layout exists (init made them durably before anything else).
    for d, dirs, _ in os.walk(pre):
        os.makedirs(os.path.join(out, os.path.relpath(d, pre)), exist_ok=True)
    os.makedirs(os.path.join(out, "locks"), exist_ok=True)
    gone = 0
    for rel in sorted(state):
        src = os.path.join(pre, rel) if os.path.exists(os.path.join(pre, rel)) else os.path.join(repo, rel)
        if not os.path.exists(src):
            gone += 1
            continue
        dst = os.path.join(out, rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        os.link(src, dst)
    return gone


def main():
    args = sys.argv[1:]
    n = 8
    if "--cuts" in args:
        k = args.index("--cuts")
        n = int(args[k + 1])
        del args[k:k + 2]
    trace, pre, repo, out = args[0], os.path.realpath(args[1]), os.path.realpath(args[2]), args[3]
    calls = parse(trace)
    evs, durable_at = events(calls, repo)
    if not evs:
        raise SystemExit("power_cut: the trace holds no rename or deletion in " + repo)
    # Cut points: just before and just after each event, thinned to n, always keeping the
    # first and the last (nothing done yet / everything done).
    points = sorted({i for i, _, _ in evs} | {i + 1 for i, _, _ in evs} |
                    {durable_at[p] + 1 for p in durable_at if durable_at[p] != float("inf")})
    if len(points) > n:
        step = (len(points) - 1) / (n - 1)
        points = sorted({points[round(k * step)] for k in range(n)})
    shutil.rmtree(out, ignore_errors=True)
    for k, cut in enumerate(points):
        d = os.path.join(out, "cut-%02d" % k)
        gone = build_cut(pre, repo, d, cut, evs, durable_at)
        done = [w for i, w, _ in evs if i < cut]
        print("cut-%02d %d after %d renames, %d deletions%s" %
              (k, cut, done.count("rename"), done.count("unlink"),
               ", %d interim object(s) counted as lost" % gone if gone else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
