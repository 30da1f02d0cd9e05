#!/usr/bin/env python3
"""Compare two `snapshots --json` outputs (restic's and haven's) snapshot by snapshot.

    compare_snapshots_json.py RESTIC.json HAVEN.json

Both must list the same snapshot ids; for each id these must agree: tree, paths, hostname,
username, tags, parent, short_id (if present in both), and time (as an instant, to the
nanosecond; a different textual form of the same instant is reported as a note only).
Exit 0 when they agree, 1 otherwise.
"""
import json
import re
import sys
from datetime import datetime, timezone

TIME_RE = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$")


def instant(s):
    """RFC 3339 with up to 9 fraction digits -> integer nanoseconds since the epoch."""
    m = TIME_RE.match(s)
    if not m:
        raise ValueError("not an RFC 3339 time: %r" % s)
    y, mo, d, h, mi, sec = (int(x) for x in m.groups()[:6])
    frac = int((m.group(7) or "0").ljust(9, "0"))
    tz = m.group(8)
    off = 0
    if tz != "Z":
        sign = 1 if tz[0] == "+" else -1
        off = sign * (int(tz[1:3]) * 3600 + int(tz[4:6]) * 60)
    base = datetime(y, mo, d, h, mi, sec, tzinfo=timezone.utc).timestamp()
    return (int(base) - off) * 10**9 + frac


def load(path):
    with open(path, "rb") as f:
        data = json.load(f)
    if not isinstance(data, list):
        raise SystemExit("%s: expected a JSON array of snapshots" % path)
    return {s["id"]: s for s in data}


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    a, b = load(sys.argv[1]), load(sys.argv[2])
    problems = []
    for i in sorted(set(a) - set(b)):
        problems.append("snapshot %s: only in %s" % (i[:8], sys.argv[1]))
    for i in sorted(set(b) - set(a)):
        problems.append("snapshot %s: only in %s" % (i[:8], sys.argv[2]))
    for i in sorted(set(a) & set(b)):
        sa, sb = a[i], b[i]
        for k in ("tree", "paths", "hostname", "username", "tags", "parent", "excludes"):
            va, vb = sa.get(k), sb.get(k)
            if k in ("tags", "excludes") and not va and not vb:
                continue
            if va != vb:
                problems.append("snapshot %s: %s differs: %r vs %r" % (i[:8], k, va, vb))
        if "short_id" in sa and "short_id" in sb and sa["short_id"] != sb["short_id"]:
            problems.append("snapshot %s: short_id differs: %r vs %r"
                            % (i[:8], sa["short_id"], sb["short_id"]))
        try:
            ta, tb = instant(sa["time"]), instant(sb["time"])
            if ta != tb:
                problems.append("snapshot %s: time differs: %s vs %s" % (i[:8], sa["time"], sb["time"]))
            elif sa["time"] != sb["time"]:
                print("note: snapshot %s: same instant, different text: %s vs %s"
                      % (i[:8], sa["time"], sb["time"]))
        except (KeyError, ValueError) as e:
            problems.append("snapshot %s: bad time: %s" % (i[:8], e))
    print("compare_snapshots_json: %d snapshots in %s, %d in %s"
          % (len(a), sys.argv[1], len(b), sys.argv[2]))
    for p in problems:
        print("  DIFF " + p)
    return 1 if problems or not a else 0


if __name__ == "__main__":
    sys.exit(main())
