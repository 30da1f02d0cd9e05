#!/usr/bin/env python3
"""Check haven's write protocol in an strace log (tests/integration/durability.sh).

    check_durability.py TRACE REPO

TRACE comes from `strace -f -y -qq -o TRACE -e trace=fsync,fdatasync,rename,renameat,
renameat2,link,linkat,unlink,unlinkat haven ...` (one command). REPO is the repository
path. Checked, for every object that appeared under REPO (locks aside):

  1. its temp file was fsync'ed before it was renamed (or linked) to its final name;
  2. its folder was fsync'ed after the rename (the name is durable), and before anything
     that depends on it: a pack's folder before any later index file is renamed, an index
     file's folder before any later snapshot is renamed, and any new object's folder before
     any object of the repository is deleted (prune, key passwd: new before old);
  3. order of kinds: no snapshot is renamed before the last pack and index file renamed
     ahead of it; no index file or pack is deleted before every new index file is durable.

Prints one line per violation and exits 1, or prints a summary and exits 0.
"""
import os
import re
import sys

CALL = re.compile(r'^(\d+)\s+(\w+)\((.*)\)\s+=\s+(-?\d+)')
FD_PATH = re.compile(r'<([^>]*)>')
STR = re.compile(r'"((?:[^"\\]|\\.)*)"')


def parse(path):
    """Completed calls in completion order: (name, args, result), joining the
    `<unfinished ...>` and `<... resumed>` halves of calls that other threads interleaved."""
    pending = {}
    calls = []
    for raw in open(path, encoding="utf-8", errors="replace"):
        line = raw.rstrip("\n")
        m = re.match(r'^(\d+)\s+(.*)$', line)
        if not m:
            continue
        pid, rest = m.group(1), m.group(2)
        if rest.endswith("<unfinished ...>"):
            pending[pid] = rest[: -len("<unfinished ...>")].rstrip()
            continue
        r = re.match(r'^<\.\.\. (\w+) resumed>(.*)$', rest)
        if r:
            rest = pending.pop(pid, r.group(1) + "(") + r.group(2)
        c = CALL.match(pid + " " + rest)
        if c:
            calls.append((c.group(2), c.group(3), int(c.group(4))))
    return calls


def kind(path, repo):
    rel = os.path.relpath(path, repo)
    top = rel.split("/")[0]
    return {"data": "pack", "index": "index", "snapshots": "snapshot", "keys": "key",
            "locks": "lock", "config": "config"}.get(top)


def main():
    trace, repo = sys.argv[1], os.path.realpath(sys.argv[2])
    calls = parse(trace)
    errors = []
    synced_files = set()      # temp paths fsync'ed so far
    dir_synced_at = {}        # folder -> index of its last fsync
    renamed = []              # (index, final path, kind)
    unlinks = []              # (index, path, kind)
    for i, (name, args, res) in enumerate(calls):
        if res != 0:
            continue
        if name in ("fsync", "fdatasync"):
            m = FD_PATH.search(args)
            if not m:
                continue
            p = m.group(1)
            if "-tmp-" in os.path.basename(p):
                synced_files.add(p)
            else:
                dir_synced_at[p.rstrip("/")] = i
        elif name in ("rename", "renameat", "renameat2", "link", "linkat"):
            s = STR.findall(args)
            if len(s) < 2:
                continue
            src, dst = s[0], s[1]
            if not dst.startswith(repo + "/"):
                continue
            k = kind(dst, repo)
            if k is None or k == "lock":
                continue
            if src not in synced_files:
                errors.append("%s %s: renamed from %s without an fsync of the temp file"
                              % (k, dst, src))
            renamed.append((i, dst, k))
        elif name in ("unlink", "unlinkat"):
            s = STR.findall(args)
            if not s:
                continue
            p = s[-1]
            if name == "unlinkat":
                m = FD_PATH.search(args)
                if m and not p.startswith("/"):
                    p = m.group(1) + "/" + p
            if not p.startswith(repo + "/") or "-tmp-" in p:
                continue
            k = kind(p, repo)
            if k in (None, "lock"):
                continue
            unlinks.append((i, p, k))

    def durable_at(i, path):
        """Index of the first fsync of path's folder after call i, or None."""
        d = os.path.dirname(path)
        best = None
        for j, (name, args, res) in enumerate(calls[i + 1:], start=i + 1):
            if name in ("fsync", "fdatasync") and res == 0:
                m = FD_PATH.search(args)
                if m and m.group(1).rstrip("/") == d:
                    best = j
                    break
        return best

    durable = {}
    for i, path, k in renamed:
        j = durable_at(i, path)
        if j is None:
            errors.append("%s %s: its folder was never fsync'ed after the rename" % (k, path))
        durable[path] = j if j is not None else float("inf")

    # 2 + 3: dependencies.
    for i, path, k in renamed:
        if k == "index":
            for pi, pp, pk in renamed:
                if pk == "pack" and pi < i and durable[pp] > i:
                    errors.append("index %s renamed before pack %s was durable" % (path, pp))
        if k == "snapshot":
            for pi, pp, pk in renamed:
                if pk in ("pack", "index") and pi < i and durable[pp] > i:
                    errors.append("snapshot %s renamed before %s %s was durable" % (path, pk, pp))
    for ui, up, uk in unlinks:
        for ri, rp, rk in renamed:
            if ri < ui and durable[rp] > ui:
                errors.append("%s %s deleted before the new %s %s was durable" % (uk, up, rk, rp))
        if uk in ("index", "pack"):
            later = [rp for ri, rp, rk in renamed if rk == "index" and ri > ui]
            if later:
                errors.append("%s %s deleted before new index file %s was written"
                              % (uk, up, later[0]))

    for e in errors[:50]:
        print("DURABILITY: " + e)
    if errors:
        print("%d violations" % len(errors))
        return 1
    kinds = {}
    for _, _, k in renamed:
        kinds[k] = kinds.get(k, 0) + 1
    print("ok: %s written durably in order; %d deletions after them"
          % (", ".join("%d %s" % (n, k) for k, n in sorted(kinds.items())), len(unlinks)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
