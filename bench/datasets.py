#!/usr/bin/env python3
"""Deterministic datasets for bench/compare (Python 3 standard library only).

Usage:
  datasets.py OUT [--log-mib 512] [--random-mib 256] [--small-files 2000]
                  [--many-files 200000] [--many-dirs 2000] [--only NAME,...]
  datasets.py mutate TREE STEP        (B7: change a many-files tree in place, step 1, 2, ...)

Creates under OUT, each only when missing (a `.done` marker is written last, so an
interrupted run is redone):
  small/      --small-files files of 768..1280 bytes of config-like text in a/ and b/
  edit/       a copy of small/ in which 1% of the files have one more line
  log.txt     --log-mib MiB of log lines that never repeat (timestamps, ids, counters);
              zstd -3 keeps about 0.29 of it
  random.bin  --random-mib MiB of incompressible bytes (SHAKE-128 in counter mode)
  many/       --many-files files of 64 B .. 16 KiB (log-uniform) of distinct text, spread
              over --many-dirs directories two levels deep (dNNN/sNNNNN/fNNNNNNN.txt)

The same arguments give byte-identical files on every machine and Python >= 3.8: all
randomness comes from random.Random(seed) integer draws and hashlib, never from the clock.
The file shapes follow ../shared/bench/make-datasets.py and make-many-files.py; the
generator itself is separate code.
"""
import argparse
import hashlib
import os
import random
import shutil
import sys

# ---- small/ and edit/ -------------------------------------------------------------------

_KEYS = ("color", "editor", "font", "theme", "timeout", "retries", "path", "shell", "alias",
         "history", "pager", "prompt", "locale", "indent", "tabs", "width", "backup", "sync",
         "remote", "branch", "signing", "proxy", "cache", "verbose")
_VALUES = ("true", "false", "auto", "never", "always", "vim", "emacs", "nano", "dark", "light",
           "solarized", "monokai", "utf-8", "/usr/bin", "~/.local/bin", "main", "origin",
           "none", "less -R", "zsh", "bash")


def _config_text(rng, index, size):
    lines = [f"; generated settings file {index}", f"[section{rng.randrange(8)}]"]
    length = sum(len(x) + 1 for x in lines)
    while length < size:
        k = _KEYS[rng.randrange(len(_KEYS))]
        v = _VALUES[rng.randrange(len(_VALUES))]
        line = f"{k}.{rng.randrange(100)} = {v}"
        lines.append(line)
        length += len(line) + 1
    return ("\n".join(lines) + "\n")[:size - 1] + "\n"


def make_small(path, count, seed=11):
    rng = random.Random(seed)
    for sub in ("a", "b"):
        os.makedirs(os.path.join(path, sub), exist_ok=True)
    for i in range(count):
        sub = "a" if i % 2 == 0 else "b"
        size = 768 + rng.randrange(513)
        with open(os.path.join(path, sub, f".rc{i:05d}"), "w", encoding="ascii") as f:
            f.write(_config_text(rng, i, size))


def make_edit(small, path, seed=12):
    shutil.copytree(small, path)
    files = sorted(os.path.join(d, n) for d, _, ns in os.walk(path) for n in ns)
    rng = random.Random(seed)
    for p in rng.sample(files, max(1, len(files) // 100)):
        with open(p, "a", encoding="ascii") as f:
            f.write("edited = yes\n")


# ---- log.txt ------------------------------------------------------------------------------

_LEVELS = ("INFO ", "INFO ", "INFO ", "DEBUG", "WARN ", "ERROR")
_SERVICES = ("api.gateway", "api.users", "store.pages", "store.wal", "queue.ingest",
             "queue.retry", "cache.front", "auth.tokens", "sched.cron", "blob.upload",
             "blob.gc", "search.query")
_VERBS = ("accepted", "served", "rejected", "queued", "flushed", "compacted", "evicted",
          "retried", "timed out", "opened", "closed", "renamed", "synced", "verified")
_NOUNS = ("request", "session", "segment", "page", "object", "batch", "lease", "ticket",
          "manifest", "snapshot", "replica", "shard", "upload", "token")
_PATHS = ("/v1/items", "/v1/users", "/v2/orders", "/healthz", "/v1/blobs", "/v2/search",
          "/metrics", "/v1/login")


def make_log(path, mib, seed=13):
    rng = random.Random(seed)
    rand = rng.randrange
    bits = rng.getrandbits
    target = mib << 20
    ms = 1_650_000_000_000  # epoch milliseconds; advances by a random step per line
    written = 0
    with open(path, "w", encoding="ascii", buffering=1 << 22) as f:
        while written < target:
            out = []
            for _ in range(8192):
                ms += 1 + rand(700)
                sec, frac = divmod(ms, 1000)
                kind = rand(4)
                if kind == 0:
                    tail = (f"{_VERBS[rand(14)]} {_NOUNS[rand(14)]} {_PATHS[rand(8)]}"
                            f" status={(200, 200, 201, 204, 404, 500)[rand(6)]}"
                            f" bytes={rand(1 << 20)} took={rand(5000)}ms")
                elif kind == 1:
                    tail = (f"{_NOUNS[rand(14)]} {bits(48):012x} {_VERBS[rand(14)]}"
                            f" after {rand(9)} attempts")
                elif kind == 2:
                    tail = (f"{_VERBS[rand(14)]} {rand(100000)} {_NOUNS[rand(14)]}s"
                            f" in {_SERVICES[rand(12)]} queue={rand(512)}")
                else:
                    tail = (f"user={bits(24):06x} {_NOUNS[rand(14)]} {_VERBS[rand(14)]}"
                            f" {_NOUNS[rand(14)]} {_VERBS[rand(14)]}")
                out.append(f"{sec}.{frac:03d} {_LEVELS[rand(6)]} {_SERVICES[rand(12)]}"
                           f" req={bits(40):010x} {tail}\n")
            block = "".join(out)
            if written + len(block) > target:
                block = block[:target - written]
            f.write(block)
            written += len(block)


# ---- random.bin ---------------------------------------------------------------------------

def make_random(path, mib, seed=14):
    key = hashlib.sha256(b"haven-bench-random-%d" % seed).digest()
    with open(path, "wb") as f:
        for block in range(mib):
            f.write(hashlib.shake_128(key + block.to_bytes(8, "big")).digest(1 << 20))


# ---- many/ --------------------------------------------------------------------------------

_TEXT = b"etaoinshrdlucmfwypvbgkjqxz0123456789 \n-_"
# Maps every byte value onto the text alphabet (a few letters come up slightly more often).
_TO_TEXT = bytes(_TEXT[i % len(_TEXT)] for i in range(256))


def _text(rng, size):
    return rng.randbytes(size).translate(_TO_TEXT) if hasattr(rng, "randbytes") else \
        bytes(rng.getrandbits(8) for _ in range(size)).translate(_TO_TEXT)


def _many_path(root, i, dirs):
    d = i % dirs
    return os.path.join(root, f"d{d // 50:03d}", f"s{d:05d}", f"f{i:07d}.txt")


def _many_size(rng):
    # log-uniform between 64 B and 16 KiB
    return int(64 * 256 ** rng.random())


def make_many(root, files, dirs, seed=15):
    rng = random.Random(seed)
    made = set()
    for i in range(files):
        p = _many_path(root, i, dirs)
        parent = os.path.dirname(p)
        if parent not in made:
            os.makedirs(parent, exist_ok=True)
            made.add(parent)
        head = b"#%d\n" % i
        with open(p, "wb") as f:
            f.write(head + _text(rng, max(0, _many_size(rng) - len(head))))


def mutate_many(root, step):
    """B7: rewrite 5% of the files, delete 1%, add 1% new ones (deterministic per step)."""
    files = sorted(os.path.join(d, n) for d, _, ns in os.walk(root) for n in ns)
    dirs = sorted({os.path.dirname(p) for p in files})
    rng = random.Random(1000 + step)
    n = len(files)
    picked = rng.sample(range(n), max(1, n // 100 * 6))
    rewrite, delete = picked[: max(1, n // 20)], picked[max(1, n // 20):]
    for k in rewrite:
        head = b"#rewritten-%d-%d\n" % (step, k)
        with open(files[k], "wb") as f:
            f.write(head + _text(rng, _many_size(rng)))
    for k in delete:
        os.unlink(files[k])
    for k in range(max(1, n // 100)):
        p = os.path.join(dirs[rng.randrange(len(dirs))], f"n{step}-{k:06d}.txt")
        with open(p, "wb") as f:
            f.write(b"#new-%d-%d\n" % (step, k) + _text(rng, _many_size(rng)))


# ---- driver -------------------------------------------------------------------------------

def _once(path, name, build):
    """Runs build(tmp) into path.tmp and renames it to path, so a half-made dataset is redone."""
    if os.path.exists(path):
        return
    tmp = path + ".tmp"
    if os.path.isdir(tmp):
        shutil.rmtree(tmp)
    elif os.path.exists(tmp):
        os.unlink(tmp)
    print(f"datasets: making {name} ...", file=sys.stderr, flush=True)
    build(tmp)
    os.rename(tmp, path)


def main(argv):
    if argv[:1] == ["mutate"]:
        if len(argv) != 3:
            sys.exit("usage: datasets.py mutate TREE STEP")
        mutate_many(argv[1], int(argv[2]))
        return 0
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--log-mib", type=int, default=512)
    ap.add_argument("--random-mib", type=int, default=256)
    ap.add_argument("--small-files", type=int, default=2000)
    ap.add_argument("--many-files", type=int, default=200_000)
    ap.add_argument("--many-dirs", type=int, default=2000)
    ap.add_argument("--only", default="small,edit,log,random,many",
                    help="comma-separated subset of small,edit,log,random,many")
    a = ap.parse_args(argv)
    want = set(a.only.split(","))
    os.makedirs(a.out, exist_ok=True)
    j = lambda n: os.path.join(a.out, n)  # noqa: E731
    if "small" in want or "edit" in want:
        _once(j("small"), "small/", lambda t: make_small(t, a.small_files))
    if "edit" in want:
        _once(j("edit"), "edit/", lambda t: make_edit(j("small"), t))
    if "log" in want:
        _once(j("log.txt"), f"log.txt ({a.log_mib} MiB)", lambda t: make_log(t, a.log_mib))
    if "random" in want:
        _once(j("random.bin"), f"random.bin ({a.random_mib} MiB)",
              lambda t: make_random(t, a.random_mib))
    if "many" in want:
        _once(j("many"), f"many/ ({a.many_files} files)",
              lambda t: make_many(t, a.many_files, a.many_dirs))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
