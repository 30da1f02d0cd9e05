"""Remote storage for bench/compare's R workloads (issue 16): a one-node Ceph radosgw on
loopback (tests/tools/ceph-s3-start) reached through tests/tools/delay-proxy.py, which adds
25 ms each way (the kernel here has no netem). haven and restic 0.14 use the same server
through the same proxy, one bucket per tool and run, each with its own cold cache.

Set-up traffic (copying a template repository into a bucket) goes to radosgw directly;
only the timed commands pass the proxy. Buckets are removed with radosgw-admin once a run
is done, since memstore keeps objects in RAM.
"""
import os
import shutil
import signal
import subprocess
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CEPH_START = os.path.join(ROOT, "tests", "tools", "ceph-s3-start")
DELAY_PROXY = os.path.join(ROOT, "tests", "tools", "delay-proxy.py")
# /usr/share twice (R1's last round of each tool is kept for R2/R4) plus one run's buckets
MEMSTORE_BYTES = 8 << 30


class CephS3:
    def __init__(self, state_dir, delay_ms=25):
        self.state = state_dir
        self.delay_ms = delay_ms
        self.endpoint = None   # radosgw, direct
        self.proxied = None    # through the delay proxy
        self.creds = {}
        self.proxy = None

    def start(self):
        env = dict(os.environ, CEPH_S3_MEMSTORE_BYTES=str(MEMSTORE_BYTES))
        r = subprocess.run([CEPH_START, self.state], env=env, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"ceph-s3-start failed: {r.stderr[-1500:]}")
        self.endpoint = r.stdout.strip().splitlines()[-1]
        with open(os.path.join(self.state, "env")) as f:
            for line in f:
                k, _, v = line.strip().partition("=")
                if k.startswith("AWS_"):
                    self.creds[k] = v
        port_file = os.path.join(self.state, "proxy.port")
        if os.path.exists(port_file):
            os.unlink(port_file)
        upstream = self.endpoint.removeprefix("http://")
        self.proxy = subprocess.Popen(
            ["python3", DELAY_PROXY, "--upstream", upstream, "--delay-ms", str(self.delay_ms),
             "--port-file", port_file], stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        for _ in range(100):
            if os.path.exists(port_file) and open(port_file).read().strip():
                break
            time.sleep(0.1)
        else:
            raise RuntimeError("the delay proxy did not start")
        self.proxied = "http://127.0.0.1:" + open(port_file).read().strip()

    def stop(self):
        if self.proxy:
            os.killpg(self.proxy.pid, signal.SIGTERM)
            self.proxy.wait()
            self.proxy = None
        subprocess.run([CEPH_START, "--stop", self.state], capture_output=True)

    def env(self):
        """Variables every tool needs (credentials; AWS_CA_BUNDLE is harmless for http)."""
        return dict(self.creds)

    def url(self, bucket, delayed=True):
        return "s3:" + (self.proxied if delayed else self.endpoint) + "/" + bucket

    def remove_bucket(self, bucket):
        subprocess.run(["radosgw-admin", "-c", os.path.join(self.state, "ceph.conf"), "bucket",
                        "rm", "--bucket=" + bucket, "--purge-objects"],
                       capture_output=True, timeout=600)

    def upload_dir(self, local, bucket):
        """Copies a local repository into a new bucket, directly (not timed): rclone's S3
        backend with an on-the-fly remote."""
        if not shutil.which("rclone"):
            subprocess.run(["apt-get", "install", "-y", "-qq", "rclone"], capture_output=True)
        if not shutil.which("rclone"):
            raise RuntimeError("rclone is missing and could not be installed (apt-get install rclone)")
        remote = (":s3,provider=Ceph,endpoint='" + self.endpoint + "',access_key_id=" +
                  self.creds["AWS_ACCESS_KEY_ID"] + ",secret_access_key=" +
                  self.creds["AWS_SECRET_ACCESS_KEY"] + ":" + bucket)
        # rclone's S3 client cannot load AWS_CA_BUNDLE (set on these machines), and the
        # endpoint is plain http anyway
        env = {k: v for k, v in os.environ.items() if k != "AWS_CA_BUNDLE"}
        r = subprocess.run(["rclone", "copy", "--transfers", "16", local, remote],
                           capture_output=True, text=True, env=env)
        if r.returncode != 0:
            raise RuntimeError(f"rclone copy to {bucket} failed: {r.stderr[-1500:]}")
