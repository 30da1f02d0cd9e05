#!/usr/bin/env python3
"""Compare two `forget --json` outputs (restic's and haven's) group by group.

    compare_forget.py RESTIC.json HAVEN.json [--ids-out FILE]

Each output is restic's array of groups {"tags","host","paths","keep","remove","reasons"}
(an empty file counts as no groups: restic prints nothing when there is no policy).
Groups are matched by (host, paths, tags) -- restic prints them in random order. For each
group the keep and remove sets of snapshot ids must be identical; for every kept snapshot
the reasons ("matches") and counters must be identical too (reasons[i] belongs to keep[i]).
With --ids-out, the kept ids of all groups are written to FILE, one per line, sorted.
Exit 0 when they agree, 1 otherwise (the differences are printed).
"""
import json
import sys


def load(path):
    with open(path, encoding="utf-8") as f:
        text = f.read().strip()
    if not text:
        return []
    data = json.loads(text)
    if not isinstance(data, list):
        raise SystemExit("%s: not a JSON array" % path)
    return data


def key(group):
    def opt(v):
        return None if v is None else tuple(v)
    return (group.get("host", ""), opt(group.get("paths")), opt(group.get("tags")))


def summarise(path):
    groups = {}
    for g in load(path):
        k = key(g)
        if k in groups:
            raise SystemExit("%s: group %r appears twice" % (path, k))
        keep = g.get("keep") or []
        remove = g.get("remove") or []
        reasons = g.get("reasons") or []
        if len(reasons) != len(keep):
            raise SystemExit("%s: group %r has %d kept snapshots but %d reasons"
                             % (path, k, len(keep), len(reasons)))
        why = {}
        for sn, r in zip(keep, reasons):
            if r.get("snapshot", {}).get("time") != sn.get("time"):
                raise SystemExit("%s: group %r: reason does not belong to snapshot %s"
                                 % (path, k, sn.get("id")))
            why[sn["id"]] = (tuple(r.get("matches") or []),
                             tuple(sorted((r.get("counters") or {}).items())))
        groups[k] = {
            "keep": [s["id"] for s in keep],
            "remove": [s["id"] for s in remove],
            "why": why,
        }
    return groups


def main():
    args = sys.argv[1:]
    ids_out = None
    if "--ids-out" in args:
        i = args.index("--ids-out")
        ids_out = args[i + 1]
        del args[i:i + 2]
    if len(args) != 2:
        raise SystemExit(__doc__)
    a, b = summarise(args[0]), summarise(args[1])
    problems = []
    for k in sorted(set(a) | set(b), key=repr):
        if k not in b:
            problems.append("group %r only in %s" % (k, args[0]))
            continue
        if k not in a:
            problems.append("group %r only in %s" % (k, args[1]))
            continue
        ga, gb = a[k], b[k]
        for what in ("keep", "remove"):
            sa, sb = set(ga[what]), set(gb[what])
            if sa != sb:
                problems.append("group %r: %s differs: only in first %s, only in second %s"
                                % (k, what, sorted(x[:8] for x in sa - sb),
                                   sorted(x[:8] for x in sb - sa)))
        if ga["keep"] != gb["keep"] and set(ga["keep"]) == set(gb["keep"]):
            problems.append("group %r: keep order differs" % (k,))
        for sid in set(ga["why"]) & set(gb["why"]):
            if ga["why"][sid] != gb["why"][sid]:
                problems.append("group %r: snapshot %s: reasons %r vs %r"
                                % (k, sid[:8], ga["why"][sid], gb["why"][sid]))
    if ids_out:
        with open(ids_out, "w", encoding="utf-8") as f:
            for sid in sorted(x for g in a.values() for x in g["keep"]):
                f.write(sid + "\n")
    if problems:
        print("\n".join(problems))
        return 1
    n_keep = sum(len(g["keep"]) for g in a.values())
    n_remove = sum(len(g["remove"]) for g in a.values())
    print("ok: %d groups, %d keep, %d remove" % (len(a), n_keep, n_remove))
    return 0


if __name__ == "__main__":
    sys.exit(main())
