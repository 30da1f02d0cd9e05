#!/usr/bin/env python3
"""Compare two directory trees byte-exactly, metadata included (stdlib only).

    compare_trees.py [options] A B

For every path below A and B (relative, raw bytes, the roots themselves included as "."):
type, content (SHA-256), size, permission bits incl. setuid/setgid/sticky, uid/gid, mtime to
the nanosecond (lstat, so symlinks are compared by their own mtime), symlink target bytes,
xattrs (user.* names and values by default), hard-link identity (paths sharing an inode in
A must share one in B and vice versa), device numbers of block/char devices.
atime and ctime are never compared (atime is not restorable reliably, ctime not at all).

Options:
  --ignore-dir-mtime      do not compare directory mtimes
  --ignore-root-meta      do not compare the metadata of the two roots themselves
  --ignore-owner          do not compare uid/gid
  --all-xattrs            compare every xattr namespace, not only user.*
  --lossy-symlink-targets accept a B symlink target equal to A's with every invalid UTF-8
                          byte replaced by U+FFFD (restic < 0.16 has no linktarget_raw)
  --ignore PATH           skip PATH (relative to the roots) and everything below it
                          (repeatable)
  --check-sparse PATH     also require the regular file PATH (relative) to be sparse in B
                          (allocated bytes < size / 2); reported in its own section
                          (repeatable)
  --no-atime              accepted for clarity; atime is never compared anyway
  -q, --quiet             print only differences

Exit status: 0 identical, 1 differences found, 2 usage or I/O error.
"""
import hashlib
import os
import stat
import sys


def show(p: bytes) -> str:
    """Render a raw path readably: printable UTF-8 kept, everything else escaped (\\xNN)."""
    out = []
    for ch in p.decode("utf-8", "surrogateescape"):
        o = ord(ch)
        if 0xDC80 <= o <= 0xDCFF:          # an undecodable byte
            out.append("\\x%02x" % (o - 0xDC00))
        elif ch in "\\\"":
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif o < 0x20 or 0x7F <= o < 0xA0:
            out.append("\\x%02x" % o)
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def fmt_time(ns: int) -> str:
    import time
    sec, frac = divmod(ns, 10**9)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(sec)) + ".%09dZ" % frac


TYPE_NAMES = {
    stat.S_IFREG: "file",
    stat.S_IFDIR: "dir",
    stat.S_IFLNK: "symlink",
    stat.S_IFIFO: "fifo",
    stat.S_IFCHR: "chardev",
    stat.S_IFBLK: "blockdev",
    stat.S_IFSOCK: "socket",
}


def sha256_file(path: bytes) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while True:
            b = f.read(1 << 20)
            if not b:
                break
            h.update(b)
    return h.hexdigest()


def read_xattrs(path: bytes, all_ns: bool):
    try:
        names = os.listxattr(path, follow_symlinks=False)
    except OSError as e:
        # symlinks on some file systems, or xattrs unsupported
        if e.errno in (95, 61):  # EOPNOTSUPP, ENODATA
            return {}
        raise
    res = {}
    for n in names:
        if not all_ns and not n.startswith("user."):
            continue
        try:
            res[n] = os.getxattr(path, n, follow_symlinks=False)
        except OSError as e:
            res[n] = "<error %s>" % e.strerror
    return res


def scan(root: bytes, opts):
    """Return {relpath: record}, {relpath: inode key}."""
    entries = {}
    inodes = {}

    def visit(rel: bytes, full: bytes):
        for ig in opts["ignore"]:
            if rel == ig or rel.startswith(ig + b"/"):
                return
        st = os.lstat(full)
        kind = TYPE_NAMES.get(stat.S_IFMT(st.st_mode), "unknown")
        rec = {
            "type": kind,
            "mode": "%04o" % stat.S_IMODE(st.st_mode),
            "uid": st.st_uid,
            "gid": st.st_gid,
            "mtime": st.st_mtime_ns,
            "xattrs": read_xattrs(full, opts["all_xattrs"]),
        }
        if kind == "file":
            rec["size"] = st.st_size
            rec["sha256"] = sha256_file(full)
            rec["alloc"] = st.st_blocks * 512
        elif kind == "symlink":
            rec["target"] = os.readlink(full)
        elif kind in ("chardev", "blockdev"):
            rec["rdev"] = (os.major(st.st_rdev), os.minor(st.st_rdev))
        entries[rel] = rec
        if kind != "dir":
            inodes[rel] = (st.st_dev, st.st_ino)
        if kind == "dir":
            for name in sorted(os.listdir(full)):
                visit(name if rel == b"." else rel + b"/" + name, full + b"/" + name)

    visit(b".", root)
    return entries, inodes


def fffd_replace(b: bytes) -> bytes:
    """Go's json.Marshal behaviour: each byte of an invalid UTF-8 sequence -> U+FFFD."""
    out = bytearray()
    i = 0
    while i < len(b):
        # find longest valid UTF-8 sequence starting at i (1..4 bytes)
        for n in (1, 2, 3, 4):
            chunk = b[i:i + n]
            try:
                chunk.decode("utf-8")
                out += chunk
                i += n
                break
            except UnicodeDecodeError:
                continue
        else:
            out += "\ufffd".encode()
            i += 1
    return bytes(out)


def main(argv):
    opts = {
        "ignore_dir_mtime": False,
        "ignore_root_meta": False,
        "ignore_owner": False,
        "all_xattrs": False,
        "lossy_symlink_targets": False,
        "ignore": [],
        "sparse": [],
        "quiet": False,
    }
    args = []
    it = iter(argv)
    for a in it:
        if a == "--ignore-dir-mtime":
            opts["ignore_dir_mtime"] = True
        elif a == "--ignore-root-meta":
            opts["ignore_root_meta"] = True
        elif a == "--ignore-owner":
            opts["ignore_owner"] = True
        elif a == "--all-xattrs":
            opts["all_xattrs"] = True
        elif a == "--lossy-symlink-targets":
            opts["lossy_symlink_targets"] = True
        elif a == "--no-atime":
            pass
        elif a in ("-q", "--quiet"):
            opts["quiet"] = True
        elif a in ("--ignore", "--check-sparse"):
            try:
                v = next(it)
            except StopIteration:
                print("compare_trees: %s needs a PATH" % a, file=sys.stderr)
                return 2
            v = os.fsencode(v).strip(b"/")
            opts["ignore" if a == "--ignore" else "sparse"].append(v)
        elif a in ("-h", "--help"):
            print(__doc__)
            return 0
        elif a.startswith("-") and a != "-" and not os.path.exists(a):
            print("compare_trees: unknown option %s" % a, file=sys.stderr)
            return 2
        else:
            args.append(a)
    if len(args) != 2:
        print("usage: compare_trees.py [options] A B", file=sys.stderr)
        return 2
    ra, rb = (os.fsencode(x).rstrip(b"/") or b"/" for x in args)
    for r in (ra, rb):
        if not os.path.isdir(r):
            print("compare_trees: %s is not a directory" % show(r), file=sys.stderr)
            return 2

    ea, ia = scan(ra, opts)
    eb, ib = scan(rb, opts)
    diffs = []

    for p in sorted(set(ea) - set(eb)):
        diffs.append("%s: missing in B (%s in A)" % (show(p), ea[p]["type"]))
    for p in sorted(set(eb) - set(ea)):
        diffs.append("%s: extra in B (%s in B, absent in A)" % (show(p), eb[p]["type"]))

    for p in sorted(set(ea) & set(eb)):
        a, b = ea[p], eb[p]
        if a["type"] != b["type"]:
            diffs.append("%s: type differs: A %s, B %s" % (show(p), a["type"], b["type"]))
            continue
        if p == b"." and opts["ignore_root_meta"]:
            continue
        kind = a["type"]
        if kind != "symlink" and a["mode"] != b["mode"]:
            diffs.append("%s: mode differs: A %s, B %s" % (show(p), a["mode"], b["mode"]))
        if not opts["ignore_owner"] and (a["uid"], a["gid"]) != (b["uid"], b["gid"]):
            diffs.append("%s: owner differs: A %d:%d, B %d:%d"
                         % (show(p), a["uid"], a["gid"], b["uid"], b["gid"]))
        if a["mtime"] != b["mtime"] and not (kind == "dir" and opts["ignore_dir_mtime"]):
            diffs.append("%s: mtime differs: A %s, B %s (%s)"
                         % (show(p), fmt_time(a["mtime"]), fmt_time(b["mtime"]), kind))
        if kind == "file":
            if a["size"] != b["size"]:
                diffs.append("%s: size differs: A %d, B %d" % (show(p), a["size"], b["size"]))
            if a["sha256"] != b["sha256"]:
                diffs.append("%s: content differs: A sha256 %s, B sha256 %s"
                             % (show(p), a["sha256"], b["sha256"]))
        if kind == "symlink" and a["target"] != b["target"]:
            lossy_ok = opts["lossy_symlink_targets"] and fffd_replace(a["target"]) == b["target"]
            if not lossy_ok:
                diffs.append("%s: symlink target differs: A %s, B %s"
                             % (show(p), show(a["target"]), show(b["target"])))
        if kind in ("chardev", "blockdev") and a["rdev"] != b["rdev"]:
            diffs.append("%s: device number differs: A %d:%d, B %d:%d"
                         % ((show(p),) + a["rdev"] + b["rdev"]))
        if a["xattrs"] != b["xattrs"]:
            for n in sorted(set(a["xattrs"]) | set(b["xattrs"])):
                va, vb = a["xattrs"].get(n), b["xattrs"].get(n)
                if va != vb:
                    diffs.append("%s: xattr %s differs: A %r, B %r" % (show(p), n, va, vb))

    # hard-link identity, only among paths present in both trees
    common = set(ea) & set(eb) & set(ia) & set(ib)   # non-directories present in both

    def groups(inodes):
        by = {}
        for p, k in inodes.items():
            if p in common:
                by.setdefault(k, set()).add(p)
        return {p: frozenset(g) for g in by.values() for p in g}

    ga, gb = groups(ia), groups(ib)

    def fmt_group(g):
        return "{" + ", ".join(show(x) for x in sorted(g)) + "}"

    reported = set()
    for g in sorted(set(ga.values()), key=sorted):
        bgs = {gb[p] for p in g if p in gb}
        if bgs != {g}:
            reported |= bgs
            diffs.append("%s: hard-link group differs: A %s, B %s"
                         % (show(min(g)), fmt_group(g),
                            " ".join(fmt_group(x) for x in sorted(bgs, key=sorted))))
    for h in sorted(set(gb.values()), key=sorted):
        ags = {ga[p] for p in h if p in ga}
        if ags != {h} and h not in reported:
            diffs.append("%s: hard-link group differs: A %s, B %s"
                         % (show(min(h)),
                            " ".join(fmt_group(x) for x in sorted(ags, key=sorted)),
                            fmt_group(h)))

    sparse_problems = []
    sparse_info = []
    for p in opts["sparse"]:
        b = eb.get(p)
        a = ea.get(p)
        if b is None or b["type"] != "file":
            sparse_problems.append("%s: not a regular file in B" % show(p))
            continue
        info = "%s: size %d, allocated in B %d" % (show(p), b["size"], b["alloc"])
        if a is not None and a["type"] == "file":
            info += ", allocated in A %d" % a["alloc"]
        sparse_info.append(info)
        if b["alloc"] * 2 >= b["size"]:
            sparse_problems.append(info + " -> NOT sparse in B")

    if not opts["quiet"]:
        print("compare_trees: %d paths in A, %d paths in B" % (len(ea), len(eb)))
        for s in sparse_info:
            print("compare_trees: sparse check: " + s)
    if diffs:
        print("compare_trees: %d difference(s) between %s and %s:" % (len(diffs), show(ra), show(rb)))
        for d in diffs:
            print("  DIFF " + d)
    if sparse_problems:
        print("compare_trees: sparse check failed:")
        for s in sparse_problems:
            print("  SPARSE " + s)
    if diffs or sparse_problems:
        return 1
    if not opts["quiet"]:
        print("compare_trees: identical")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except OSError as e:
        print("compare_trees: I/O error: %s" % e, file=sys.stderr)
        sys.exit(2)
