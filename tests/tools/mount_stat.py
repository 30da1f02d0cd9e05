#!/usr/bin/env python3
"""Stat records of everything below a FUSE mount, for comparing two mounts (stdlib only).

    mount_stat.py ROOT OUT

Writes one record per path (relative, raw bytes as hex-escaped repr), sorted: inode, mode,
uid, gid, size, blocks, mtime/atime/ctime in nanoseconds, the symlink target, the xattr
names and values, and nlink for everything but directories (restic counts a directory's
links only once it has been listed, so that number depends on the order of visits). The
virtual directories of the mount (the root, its children, hosts/H and tags/T) show each
mount's start time: their times are written as "T".
"""
import os
import stat
import sys


def records(root):
    out = []
    stack = [b""]
    while stack:
        rel = stack.pop()
        p = os.path.join(root, rel) if rel else root
        st = os.lstat(p)
        parts = rel.split(b"/") if rel else []
        virtual = len(parts) <= 1 or (len(parts) == 2 and parts[0] in (b"hosts", b"tags"))
        times = ["T"] * 3 if virtual else [st.st_mtime_ns, st.st_atime_ns, st.st_ctime_ns]
        rec = [repr(rel), st.st_ino, oct(st.st_mode), st.st_uid, st.st_gid, st.st_size,
               st.st_blocks] + times
        if os.path.islink(p):
            rec.append(repr(os.readlink(p)))
        else:
            try:
                names = sorted(os.listxattr(p, follow_symlinks=False))
            except OSError as e:
                names = ["error %d" % e.errno]
            for n in names:
                try:
                    rec.append("%s=%r" % (n, os.getxattr(p, n, follow_symlinks=False)))
                except OSError as e:
                    rec.append("%s:error %d" % (n, e.errno))
        if stat.S_ISDIR(st.st_mode):
            for n in sorted(os.listdir(p)):
                stack.append(os.path.join(rel, n) if rel else n)
        else:
            rec.append("nlink=%d" % st.st_nlink)
        out.append(" ".join(str(x) for x in rec))
    return sorted(out)


def main():
    root = os.fsencode(sys.argv[1])
    with open(sys.argv[2], "w") as f:
        for line in records(root):
            f.write(line + "\n")


if __name__ == "__main__":
    main()
