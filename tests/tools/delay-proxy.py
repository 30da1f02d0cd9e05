#!/usr/bin/env python3
"""A TCP proxy that adds latency (the kernel here has no netem): loopback only.

    delay-proxy.py --upstream 127.0.0.1:PORT --delay-ms 25 --port-file F

Listens on a free 127.0.0.1 port (written to --port-file) and relays every connection to
--upstream, delivering each chunk --delay-ms after it arrived, in each direction (a round
trip costs 2 x delay more). Bandwidth is not limited: chunks are pipelined, only delayed.
Stop it with SIGTERM. With --log FILE, each request line seen going upstream is written to
FILE with the time it arrived (seconds since the proxy started) and its connection's number:
a trace of which requests a command makes one after another.
"""
import argparse
import collections
import os
import socket
import sys
import threading
import time


LOG = None
LOG_LOCK = threading.Lock()
T0 = time.monotonic()
METHODS = (b"GET ", b"HEAD ", b"POST ", b"PUT ", b"DELETE ")


def log_request(conn, data):
    if LOG is None or not data.startswith(METHODS):
        return
    line = data.split(b"\r\n", 1)[0].decode("latin-1")
    with LOG_LOCK:
        LOG.write(f"{time.monotonic() - T0:9.3f} c{conn} {line}\n")
        LOG.flush()


def pump(src, dst, delay, conn=None):
    queue = collections.deque()
    cv = threading.Condition()
    done = [False]

    def reader():
        try:
            while True:
                data = src.recv(1 << 16)
                if conn is not None:
                    log_request(conn, data)
                with cv:
                    queue.append((time.monotonic() + delay, data))
                    cv.notify()
                if not data:
                    return
        except OSError:
            with cv:
                queue.append((time.monotonic(), b""))
                cv.notify()

    threading.Thread(target=reader, daemon=True).start()
    try:
        while True:
            with cv:
                while not queue:
                    cv.wait()
                due, data = queue.popleft()
            wait = due - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            if not data:
                dst.shutdown(socket.SHUT_WR)
                return
            dst.sendall(data)
    except OSError:
        pass
    finally:
        done[0] = True


def serve(client, upstream, delay, conn):
    try:
        up = socket.create_connection(upstream)
    except OSError:
        client.close()
        return
    for s in (client, up):
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    t = threading.Thread(target=pump, args=(up, client, delay), daemon=True)
    t.start()
    pump(client, up, delay, conn)
    t.join()
    client.close()
    up.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--upstream", required=True)
    ap.add_argument("--delay-ms", type=float, default=25)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--log")
    a = ap.parse_args()
    global LOG
    if a.log:
        LOG = open(a.log, "a")
    host, port = a.upstream.rsplit(":", 1)
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", 0))
    srv.listen(128)
    with open(a.port_file + ".tmp", "w") as f:
        f.write(str(srv.getsockname()[1]))
    os.rename(a.port_file + ".tmp", a.port_file)
    conn = 0
    while True:
        c, _ = srv.accept()
        conn += 1
        threading.Thread(target=serve, args=(c, (host, int(port)), a.delay_ms / 1000, conn),
                         daemon=True).start()


if __name__ == "__main__":
    sys.exit(main())
