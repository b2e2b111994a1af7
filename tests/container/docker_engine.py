"""A Docker engine the container tests start for themselves and take away again.

`Engine.start()` runs Debian's dockerd as root with its own socket, pid file and exec root in a
temp dir; its data root (images and build cache: the base image, layers, stand-ins) lives in
the cache dir outside the clone, so later runs reuse them. `Engine.stop()` removes every
container, volume and network, stops dockerd by its PID, deletes the docker0/compose bridges
and the iptables rules and chains dockerd added, restores the FORWARD policy and ip_forward,
and checks that the filter and nat tables are as they were before the start.
"""
from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CACHE = Path(os.environ.get("HYBRIDSERVE_CACHE", "/var/cache/hybridserve"))
DOCKERD = "/usr/sbin/dockerd"
DOCKER = "/usr/bin/docker"          # Debian's CLI, same version as the daemon (not a newer one on PATH)
IP_FORWARD = Path("/proc/sys/net/ipv4/ip_forward")


class EngineError(RuntimeError):
    """The Docker engine could not be started, or a docker command failed."""


def skip_reason() -> str | None:
    """Why this machine cannot run the container tests (None: it can, as root on Debian)."""
    if os.name != "posix" or not Path("/etc/debian_version").exists():
        return "container tests need Debian (docker.io, mmdebstrap from its archive)"
    if os.geteuid() != 0:
        return "container tests need root (they start their own dockerd)"
    if shutil.which("apt-get") is None and not Path(DOCKERD).exists():
        return "no apt-get to install docker.io"
    if Path("/sys/class/net/docker0").exists():
        return "a docker0 bridge exists already: another Docker engine runs here"
    return None


def install_deps() -> str:
    """scripts/install_container_deps.sh (idempotent); returns the Compose v2 binary's path."""
    r = subprocess.run(["bash", str(ROOT / "scripts/install_container_deps.sh")],
                       capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
    if r.returncode != 0:
        raise EngineError(f"install_container_deps.sh failed:\n{r.stderr[-3000:]}")
    return r.stdout.strip().splitlines()[-1]


def _rules(table: str) -> list[str]:
    out = subprocess.run(["iptables", "-t", table, "-S"], capture_output=True, text=True,
                         timeout=30, check=True).stdout
    return out.splitlines()


class Engine:
    def __init__(self, compose_bin: str):
        self.compose_bin = compose_bin
        # a short path: unix socket paths are limited to 108 bytes
        self.run_dir = Path(tempfile.mkdtemp(prefix="hs-dockerd-"))
        self.sock = self.run_dir / "docker.sock"
        self.env = {**os.environ, "DOCKER_HOST": f"unix://{self.sock}"}
        self.env.pop("DOCKER_CONTEXT", None)
        self.proc: subprocess.Popen | None = None
        self.log = self.run_dir / "dockerd.log"
        self._before: dict[str, list[str]] = {}
        self._ip_forward = ""
        self._links: set[str] = set()

    # -- daemon ---------------------------------------------------------------------------
    def start(self) -> None:
        self._before = {t: _rules(t) for t in ("filter", "nat")}
        self._ip_forward = IP_FORWARD.read_text().strip()
        self._links = set(os.listdir("/sys/class/net"))
        (CACHE / "docker").mkdir(parents=True, exist_ok=True)
        last = ""
        for driver in ("overlay2", "vfs"):       # overlay2 where the kernel allows it
            self._spawn(driver)
            if self._wait_up(60):
                self.driver = driver
                return
            last = self.log.read_text(errors="replace")[-2000:]
            self._kill_daemon()
        raise EngineError(f"dockerd did not start (overlay2, vfs):\n{last}")

    def _spawn(self, driver: str) -> None:
        cmd = [DOCKERD, "--data-root", str(CACHE / "docker"), "--exec-root",
               str(self.run_dir / "exec"), "--pidfile", str(self.run_dir / "docker.pid"),
               "-H", f"unix://{self.sock}", "--storage-driver", driver,
               "--ip", "127.0.0.1"]          # a port published without an address: loopback only
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, start_new_session=True)

    def _wait_up(self, timeout: float) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.proc is not None and self.proc.poll() is not None:
                return False
            if self.docker("info", check=False, timeout=10).returncode == 0:
                return True
            time.sleep(0.5)
        return False

    def _kill_daemon(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(40)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)

    # -- commands -------------------------------------------------------------------------
    def docker(self, *args: str, timeout: float = 120, check: bool = True,
               env: dict | None = None) -> subprocess.CompletedProcess:
        r = subprocess.run([DOCKER, *args], capture_output=True, text=True, timeout=timeout,
                           env={**self.env, **(env or {})}, stdin=subprocess.DEVNULL)
        if check and r.returncode != 0:
            raise EngineError(f"docker {' '.join(args)}: exit {r.returncode}\n"
                              f"{r.stdout[-2000:]}\n{r.stderr[-3000:]}")
        return r

    def compose(self, *args: str, timeout: float = 180, check: bool = True,
                env: dict | None = None) -> subprocess.CompletedProcess:
        r = subprocess.run([self.compose_bin, *args], capture_output=True, text=True,
                           timeout=timeout, env={**self.env, **(env or {})}, cwd=ROOT,
                           stdin=subprocess.DEVNULL)
        if check and r.returncode != 0:
            raise EngineError(f"docker compose {' '.join(args)}: exit {r.returncode}\n"
                              f"{r.stdout[-2000:]}\n{r.stderr[-3000:]}")
        return r

    def inspect(self, obj: str, fmt: str) -> str:
        return self.docker("inspect", "--format", fmt, obj).stdout.strip()

    def wait_healthy(self, container: str, timeout: float = 120) -> None:
        end = time.monotonic() + timeout
        status = ""
        while time.monotonic() < end:
            status = self.inspect(container, "{{.State.Status}} {{.State.Health.Status}}")
            if status == "running healthy":
                return
            if status.startswith(("exited", "dead")):
                break
            time.sleep(0.5)
        logs = self.docker("logs", "--tail", "40", container, check=False)
        raise EngineError(f"{container} not healthy within {timeout}s ({status}):\n"
                          f"{logs.stdout[-3000:]}{logs.stderr[-3000:]}")

    def published(self, container: str, port: int) -> int:
        """The 127.0.0.1 host port a container's `port` is published on."""
        out = self.docker("port", container, str(port)).stdout.split()
        for addr in out:
            host, _, p = addr.rpartition(":")
            if host == "127.0.0.1":
                return int(p)
        raise EngineError(f"{container}:{port} is not published on 127.0.0.1: {out}")

    # -- clean-up -------------------------------------------------------------------------
    def stop(self) -> None:
        """Everything the engine made goes (images stay in the cache dir); then the daemon
        (by its PID), its bridges and its iptables rules. Raises if the machine is not left
        as it was found."""
        try:
            if self.proc is not None and self.proc.poll() is None:
                ids = self.docker("ps", "-aq", check=False).stdout.split()
                if ids:
                    self.docker("rm", "-f", "-v", *ids, check=False, timeout=120)
                vols = self.docker("volume", "ls", "-q", check=False).stdout.split()
                if vols:
                    self.docker("volume", "rm", "-f", *vols, check=False)
                self.docker("network", "prune", "-f", check=False)
                # the cache stays bounded: dangling images of earlier builds, week-old build cache
                self.docker("image", "prune", "-f", check=False)
                self.docker("builder", "prune", "-f", "--filter", "until=168h", check=False)
        finally:
            self._kill_daemon()
            self._clean_host()
            shutil.rmtree(self.run_dir, ignore_errors=True)

    def _clean_host(self) -> None:
        for dev in os.listdir("/sys/class/net"):
            if dev == "docker0" or re.fullmatch(r"br-[0-9a-f]{12}", dev):
                subprocess.run(["ip", "link", "delete", dev], timeout=30, check=False)
        for table in ("nat", "filter"):
            for rule in _rules(table):
                # every rule dockerd appended to a built-in chain jumps to a DOCKER* chain
                # or names one of its bridges
                if rule.startswith("-A ") and not rule.split()[1].startswith("DOCKER") and (
                        re.search(r"-j DOCKER", rule) or re.search(r"\b(docker0|br-[0-9a-f]{12})\b", rule)):
                    subprocess.run(["iptables", "-t", table, *("-D " + rule[3:]).split()],
                                   timeout=30, check=False)
            chains = [r.split()[1] for r in _rules(table) if r.startswith("-N DOCKER")]
            for c in chains:
                subprocess.run(["iptables", "-t", table, "-F", c], timeout=30, check=False)
            for c in chains:
                subprocess.run(["iptables", "-t", table, "-X", c], timeout=30, check=False)
        for rule in self._before.get("filter", []):
            if rule.startswith("-P "):         # dockerd sets FORWARD to DROP
                subprocess.run(["iptables", *rule.split()], timeout=30, check=False)
        if self._ip_forward:
            IP_FORWARD.write_text(self._ip_forward + "\n")
        after = {t: _rules(t) for t in ("filter", "nat")}
        left = sorted(set(os.listdir("/sys/class/net")) - self._links)
        if after != self._before or left:
            raise EngineError(f"the host is not as before the engine started: bridges {left}, "
                              f"iptables before {self._before} after {after}")
