#!/usr/bin/env python3
"""Runs an SFTP server command and relays its stdin/stdout with a fixed one-way delay, to
measure how the sftp: backend behaves on a link with latency (docs/sftp.md, pipelining).

  -o sftp.command="python3 tests/tools/sftp_delay.py 0.010 /usr/lib/openssh/sftp-server"

Each chunk read from one side is written to the other DELAY seconds after it was read
(so a request/reply round trip costs 2*DELAY); bandwidth is not limited."""
import os
import subprocess
import sys
import threading
import time
from collections import deque


def relay(src, dst, delay):
    q = deque()
    cv = threading.Condition()
    done = [False]

    def reader():
        while True:
            b = os.read(src, 1 << 20)
            with cv:
                q.append((time.monotonic() + delay, b))
                cv.notify()
            if not b:
                return

    threading.Thread(target=reader, daemon=True).start()
    while True:
        with cv:
            while not q:
                cv.wait()
            due, b = q.popleft()
        wait = due - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        if not b:
            os.close(dst)
            return
        try:
            while b:
                n = os.write(dst, b)
                b = b[n:]
        except OSError:
            return


def main():
    delay = float(sys.argv[1])
    child = subprocess.Popen(sys.argv[2:], stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    up = threading.Thread(target=relay, args=(0, child.stdin.fileno(), delay), daemon=True)
    up.start()
    relay(child.stdout.fileno(), 1, delay)
    sys.exit(child.wait())


main()
