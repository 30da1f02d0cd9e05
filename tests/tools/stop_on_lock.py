#!/usr/bin/env python3
"""Freeze a process while it holds a repository lock.

    stop_on_lock.py [--release FIFO] LOCKDIR PID [TIMEOUT_SECONDS]

--release FIFO: once polling is set up, write a line into FIFO. The caller starts the
process as `( read -r _ <FIFO; exec CMD... ) &`, so CMD cannot begin (and take and drop its
lock) before this helper is watching; PID ($!) becomes CMD's pid through exec.

Polls LOCKDIR every millisecond. As soon as a lock file is there (a 64-hex name; temporary
names are ignored) it sends SIGSTOP to PID, waits until the
kernel reports PID as stopped, and checks that the lock file still exists. Prints the lock
file name on stdout and exits 0; PID then stays stopped (send SIGCONT to resume it).

Why this is reliable: restic (and haven, which follows it) sleeps 200 ms after writing its
lock file before re-checking for other locks and starting work, so a lock seen within a
millisecond or two is always caught while it is held. If the lock vanished before the stop
took effect the process is resumed and polling continues.
LOCKDIR must hold no other process's lock (the caller checks that it is empty first, and
can read the lock back to check its pid); locks already there are not skipped because this
helper may start only after PID has taken its lock.

Exit status: 0 stopped while holding a lock; 3 the process ended (or became a zombie)
before that; 4 timeout (the process is left running); 2 usage.
"""
import os
import re
import signal
import sys
import time

HEX64 = re.compile(r"^[0-9a-f]{64}$")


def state(pid):
    try:
        with open("/proc/%d/stat" % pid, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return None
    return data[data.rindex(b")") + 2:][:1].decode()


def locks(d):
    try:
        return {n for n in os.listdir(d) if HEX64.match(n)}
    except FileNotFoundError:
        return set()


def main():
    args = sys.argv[1:]
    release = None
    if args[:1] == ["--release"] and len(args) >= 2:
        release, args = args[1], args[2:]
    if len(args) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    d, pid = args[0], int(args[1])
    timeout = float(args[2]) if len(args) == 3 else 60.0
    base = set()
    deadline = time.monotonic() + timeout
    if release:
        with open(release, "w") as f:
            f.write("go\n")
    while time.monotonic() < deadline:
        st = state(pid)
        if st is None or st in ("Z", "X"):
            print("stop_on_lock: process %d ended before it was seen holding a lock" % pid,
                  file=sys.stderr)
            return 3
        new = locks(d) - base
        if new:
            os.kill(pid, signal.SIGSTOP)
            t_stop = time.monotonic() + 5
            while state(pid) not in ("T", "t", None, "Z", "X") and time.monotonic() < t_stop:
                time.sleep(0.001)
            st = state(pid)
            if st not in ("T", "t"):
                print("stop_on_lock: process %d did not stop (state %s)" % (pid, st), file=sys.stderr)
                return 3
            still = locks(d) & new
            if still:
                print(sorted(still)[0])
                return 0
            # the lock went away between listing and stopping: resume and keep watching
            os.kill(pid, signal.SIGCONT)
        time.sleep(0.001)
    print("stop_on_lock: no lock from process %d within %.0f s" % (pid, timeout), file=sys.stderr)
    return 4


if __name__ == "__main__":
    sys.exit(main())
