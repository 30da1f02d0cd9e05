#!/usr/bin/env python3
"""A fault-injecting HTTP/1.1 reverse proxy for haven's S3 tests (loopback only, test data only).

    fault-proxy.py --upstream http://127.0.0.1:PORT --port-file F [--rate 0.1 | --every N]
                   [--seed 1] [--kinds 503,500,429,reset,truncate,lost-reply,slow] [--burst 3]
                   [--log F]

Listens on a free 127.0.0.1 port (written to --port-file once listening) and forwards every
request unchanged (the Host header too, so SigV4 signatures stay valid) over keep-alive
connections to --upstream. A request is hit by a fault with probability --rate (seeded) and
the kind is drawn from --kinds; or, with --every N, every N-th request is hit and the kinds
take turns in the order given (so every kind surely happens in a long enough run):

  503, 500   answer with that status without forwarding; a burst: the next --burst - 1
             requests get the same status
  429        answer "429 SlowDown" without forwarding
  reset      forward, then send the status line, headers and half of the body, and reset
             the connection (RST)
  truncate   forward, then send the full Content-Length but half of the body, and close
  lost-reply forward (the server acts on it), then reset before any reply byte
  slow       forward, then wait 2 s before answering

Counts of each fault go to --log (one line per fault) so a test can assert faults happened;
--trace F logs every request (times, method, path) to see how many round trips a command
makes and which of them overlap (with --rate 0 nothing is injected).
Stop it with SIGTERM.
"""
import argparse
import http.client
import random
import socket
import struct
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Faults:
    def __init__(self, rate, every, seed, kinds, burst, log):
        self.rate, self.every, self.kinds, self.burst = rate, every, kinds, burst
        self.count = 0
        self.rng = random.Random(seed)
        self.lock = threading.Lock()
        self.pending = []  # statuses still owed by a burst
        self.log = open(log, "a", buffering=1) if log else None

    def draw(self, method):
        with self.lock:
            self.count += 1
            if self.pending:
                kind = self.pending.pop()
            elif self.every and self.count % self.every == 0:
                kind = self.kinds[(self.count // self.every - 1) % len(self.kinds)]
                if kind in ("503", "500"):
                    self.pending = [kind] * (self.burst - 1)
            elif not self.every and self.rng.random() < self.rate:
                kind = self.rng.choice(self.kinds)
                if kind in ("503", "500"):
                    self.pending = [kind] * (self.burst - 1)
            else:
                return None
            if method == "HEAD" and kind in ("reset", "truncate"):
                kind = "503"
            if self.log:
                self.log.write("%s %s\n" % (kind, method))
            return kind


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fault-proxy"

    def log_message(self, fmt, *args):  # quiet
        pass

    def upstream(self):
        conn = getattr(self, "_up", None)
        if conn is None:
            u = self.server.upstream
            conn = self._up = http.client.HTTPConnection(u.hostname, u.port, timeout=120)
        return conn

    def forward(self, body):
        for attempt in range(2):  # an idle upstream connection may have been closed
            conn = self.upstream()
            try:
                conn.putrequest(self.command, self.path, skip_host=True, skip_accept_encoding=True)
                for k, v in self.headers.items():
                    conn.putheader(k, v)
                conn.endheaders(body if body else None)
                resp = conn.getresponse()
                data = resp.read()
                return resp.status, resp.reason, resp.getheaders(), data
            except (http.client.HTTPException, OSError):
                conn.close()
                self._up = None
                if attempt == 1:
                    raise

    def reset(self):
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.close_connection = True

    def send_status_only(self, status, reason):
        body = ("<Error><Code>%s</Code><Message>injected by fault-proxy</Message></Error>"
                % reason).encode()
        self.send_response(status, reason)
        self.send_header("Content-Length", str(len(body) if self.command != "HEAD" else 0))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def handle_any(self):
        t0 = time.monotonic()
        try:
            self.handle_request()
        finally:
            tr = self.server.trace
            if tr:
                with self.server.trace_mu:
                    tr.write("%.4f %.4f %s %s\n" % (t0 - self.server.t_start, time.monotonic() - self.server.t_start,
                                                     self.command, self.path.split("?")[0]))
                    tr.flush()

    def handle_request(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        kind = self.server.faults.draw(self.command)
        if kind in ("503", "500"):
            return self.send_status_only(int(kind), "ServiceUnavailable" if kind == "503" else "InternalError")
        if kind == "429":
            return self.send_status_only(429, "SlowDown")
        status, reason, headers, data = self.forward(body)
        if kind == "lost-reply":
            return self.reset()
        if kind == "slow":
            time.sleep(2)
        self.send_response_only(status, reason)
        for k, v in headers:
            if k.lower() not in ("connection", "transfer-encoding", "content-length"):
                self.send_header(k, v)
        length = len(data) if self.command != "HEAD" else int(dict((k.lower(), v) for k, v in headers).get("content-length", 0))
        self.send_header("Content-Length", str(length))
        self.end_headers()
        if self.command == "HEAD":
            return
        if kind in ("reset", "truncate") and len(data) > 1:
            self.wfile.write(data[: len(data) // 2])
            self.wfile.flush()
            if kind == "reset":
                return self.reset()
            self.close_connection = True
            return
        self.wfile.write(data)

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = handle_any


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--upstream", required=True)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--rate", type=float, default=0.1)
    ap.add_argument("--every", type=int, default=0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--kinds", default="503,500,429,reset,truncate,lost-reply,slow")
    ap.add_argument("--burst", type=int, default=3)
    ap.add_argument("--log", default="")
    ap.add_argument("--trace", default="", help="append one line per request: start and end "
                    "seconds since the proxy started, method, path (no query)")
    a = ap.parse_args()
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    srv.upstream = urllib.parse.urlparse(a.upstream)
    srv.trace = open(a.trace, "a") if a.trace else None
    srv.trace_mu = threading.Lock()
    srv.t_start = time.monotonic()
    srv.faults = Faults(a.rate, a.every, a.seed, a.kinds.split(","), max(1, a.burst), a.log)
    with open(a.port_file + ".tmp", "w") as f:
        f.write(str(srv.server_address[1]))
    import os
    os.rename(a.port_file + ".tmp", a.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
