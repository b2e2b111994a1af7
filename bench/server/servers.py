"""Processes of bench/server/run.py: paths, free ports, /proc accounting, and the servers it
starts and stops (hybridserve, the FastAPI echo floor, MXNet Model Server)."""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
VENVS = Path(os.environ.get("HYBRIDSERVE_MXNET_VENV_DIR", ROOT / ".mxnet-venvs"))
MX_PY = VENVS / "mxnet-1.9.1" / "bin" / "python"
MMS_VENV = Path(os.environ.get("HYBRIDSERVE_MMS_VENV", VENVS / "mms-1.1.11"))

_live: list["Server"] = []          # servers to stop whatever happens
SRC = ROOT                          # where service/ and framework/ are run from (--git-ref)


def source_dir() -> Path:
    """Where service/, framework/ and model_store/ are run from (ROOT, or a --git-ref copy)."""
    return SRC


def use_source(path: Path) -> None:
    global SRC
    SRC = path


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


# -- processes -----------------------------------------------------------------------------------
def free_port() -> int:
    """A free loopback port below 32768 (MMS 1.1.11 rejects higher ones: "Invalid port
    number"), outside Linux's default ephemeral range so wrk's own sockets cannot take it."""
    import random
    for _ in range(200):
        port = random.randint(20000, 32000)
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free loopback port in 20000-32000")


def _proc_table() -> dict[int, tuple[int, str]]:
    """pid → (ppid, cmdline) for every process we can see."""
    out = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat", "rb") as f:
                stat = f.read().decode("latin-1")
            ppid = int(stat[stat.rindex(")") + 2:].split()[1])
            with open(f"/proc/{d}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode("latin-1", "replace").strip()
            out[int(d)] = (ppid, cmd)
        except (OSError, ValueError):
            continue
    return out


def descendants(pid: int) -> dict[int, str]:
    table = _proc_table()
    kids: dict[int, list[int]] = {}
    for p, (pp, _) in table.items():
        kids.setdefault(pp, []).append(p)
    out, todo = {}, [pid]
    while todo:
        for k in kids.get(todo.pop(), []):
            if k not in out:
                out[k] = table[k][1]
                todo.append(k)
    return out


def cpu_ticks(pids) -> int:
    """utime+stime (clock ticks) of the given processes, including their waited-for children."""
    total = 0
    for p in pids:
        try:
            with open(f"/proc/{p}/stat", "rb") as f:
                stat = f.read().decode("latin-1")
            fields = stat[stat.rindex(")") + 2:].split()
            total += sum(int(x) for x in fields[11:15])
        except (OSError, ValueError):
            continue
    return total


def machine_busy_ticks() -> tuple[int, int, int]:
    """(busy without steal, steal, total) jiffies of the whole machine."""
    with open("/proc/stat") as f:
        vals = [int(x) for x in f.readline().split()[1:]] + [0] * 8
    idle, steal = vals[3] + vals[4], vals[7]
    total = sum(vals[:8])
    return total - idle - steal, steal, total


def loadavg() -> float:
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


@dataclass
class Server:
    key: str
    label: str
    cmd: list[str]
    port: int
    env: dict = field(default_factory=dict)
    cwd: Path | None = None             # default: SRC
    ready_path: str = "/"
    log_path: Path | None = None
    proc: subprocess.Popen | None = None
    known: dict = field(default_factory=dict)      # descendants seen so far: pid → cmdline
    error: str | None = None
    grpc_port: int | None = None        # hybridserve's gRPC API

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        env = dict(os.environ)
        if SRC != ROOT:
            env["PYTHONPATH"] = str(SRC)
        env.update(self.env)
        logf = open(self.log_path, "wb") if self.log_path else subprocess.DEVNULL
        self.proc = subprocess.Popen(self.cmd, cwd=self.cwd or SRC, env=env, stdout=logf,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        _live.append(self)

    def wait_ready(self, timeout: float) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.label} exited with {self.proc.returncode}: "
                                   f"{self.tail_log()}")
            try:
                with urllib.request.urlopen(self.base + self.ready_path, timeout=2) as r:
                    if r.status == 200:
                        self.remember()
                        return
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.3)
        raise RuntimeError(f"{self.label} not ready within {timeout:.0f} s: {self.tail_log()}")

    def tail_log(self, n: int = 3000) -> str:
        if not self.log_path or not self.log_path.exists():
            return ""
        return self.log_path.read_bytes()[-n:].decode("utf-8", "replace")

    def remember(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.known.update(descendants(self.proc.pid))

    def pids(self) -> list[int]:
        self.remember()
        return ([self.proc.pid] if self.proc else []) + list(self.known)

    def stop(self) -> None:
        """SIGTERM the server, then every descendant it had (MMS leaves its Python workers
        behind when its JVM dies), SIGKILL whatever is left; all by PID."""
        if self.proc is None:
            return
        self.remember()
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        table = _proc_table()
        left = [p for p, cmd in self.known.items() if p in table and table[p][1] == cmd]
        for p in left:
            _signal(p, signal.SIGTERM)
        end = time.monotonic() + 10
        while left and time.monotonic() < end:
            time.sleep(0.2)
            table = _proc_table()
            left = [p for p in left if p in table and table[p][1] == self.known[p]]
        for p in left:
            _signal(p, signal.SIGKILL)
        if self in _live:
            _live.remove(self)


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def stop_all() -> None:
    for s in list(_live):
        try:
            s.stop()
        except Exception as e:  # noqa: BLE001 - keep stopping the others
            log(f"stopping {s.label} failed: {e!r}")


def project_python() -> str:
    py = ROOT / ".venv" / "bin" / "python"
    return str(py) if py.exists() else sys.executable


# -- servers -------------------------------------------------------------------------------------
def hybridserve(key: str, workers: int, store: Path, tmp: Path, extra_env: dict,
                suffix: str = "") -> Server:
    port, grpc_port = free_port(), free_port()
    s = Server(key, f"hybridserve {workers}w{suffix}", [project_python(), "-m", "service",
               "--model-store", str(store), "--host", "127.0.0.1", "--port", str(port),
               "--workers", str(workers), "--log-level", "warning",
               "--grpc-port", str(grpc_port)], port,
               env=extra_env, ready_path="/v2/health/ready", log_path=tmp / f"{key}.log",
               grpc_port=grpc_port)
    return s


def echo(key: str, workers: int, tmp: Path) -> Server:
    port = free_port()
    return Server(key, f"FastAPI echo {workers}w", [project_python(), "-m", "uvicorn",
                  "--app-dir", str(HERE), "echo_app:app", "--host", "127.0.0.1", "--port",
                  str(port), "--workers", str(workers), "--no-access-log", "--log-level",
                  "warning"], port, ready_path="/health", log_path=tmp / f"{key}.log")


def mms_available() -> str | None:
    """None if MMS can be tried, else why not."""
    if shutil.which("java") is None:
        return "no `java` on PATH (MMS 1.1.11's frontend is Java)"
    if not (MMS_VENV / "bin" / "model-archiver").exists():
        return (f"no MMS venv at {MMS_VENV}: create it with `bash bench/server/setup_mms.sh` "
                "(mxnet==1.9.1, multi-model-server==1.1.11, model-archiver)")
    return None


def mms_server(tmp: Path, omp_threads: int) -> Server:
    """MMS 1.1.11: archives of the same exports, a loopback-only config, the JVM started
    directly (not through `multi-model-server --start`, which keeps a pid file in /tmp)."""
    home = tmp / "mms"
    store, logs, jtmp = home / "store", home / "logs", home / "tmp"
    for d in (store, logs, jtmp):
        d.mkdir(parents=True)
    for name, src, item_shape, warm in (("mlp", "mlp", [512], 16),
                                        ("resnet18", "resnet18_v1", [3, 224, 224], 1),
                                        ("mobilenet", "mobilenetv2_1.0", [3, 224, 224], 1)):
        s = home / "src" / name
        s.mkdir(parents=True)
        for f in (tmp / "export" / src).iterdir():
            shutil.copy(f, s / f.name)
        shutil.copy(HERE / "mms_handler.py", s / "mms_handler.py")
        (s / "bench.json").write_text(json.dumps({"item_shape": item_shape, "warm_batch": warm}))
        subprocess.run([str(MMS_VENV / "bin" / "model-archiver"), "--model-name", name,
                        "--model-path", str(s), "--handler", "mms_handler:handle", "--runtime",
                        "python3", "--export-path", str(store), "-f"], check=True,
                       capture_output=True, timeout=300)
    return mms_process(home, store, omp_threads)


def mms_process(home: Path, store: Path, omp_threads: int) -> Server:
    """The MMS 1.1.11 JVM serving `store` from `home` (logs, temp files and config there);
    `.mgmt` is its management port. Not started yet."""
    logs, jtmp = home / "logs", home / "tmp"
    for d in (logs, jtmp):
        d.mkdir(parents=True, exist_ok=True)
    port, mport = free_port(), free_port()
    (home / "config.properties").write_text(
        f"inference_address=http://127.0.0.1:{port}\n"
        f"management_address=http://127.0.0.1:{mport}\n"
        f"model_store={store}\n"
        "default_workers_per_model=2\njob_queue_size=1000\nasync_logging=true\n"
        "max_request_size=16777216\nmax_response_size=16777216\n")
    py = MMS_VENV / "bin" / "python"
    site = subprocess.run([str(py), "-c", "import mms, os; print(os.path.dirname("
                           "os.path.dirname(mms.__file__)))"], capture_output=True, text=True,
                          check=True, timeout=60).stdout.strip()
    srv = Server("mms", "MMS 1.1.11 2w",
                 ["java", f"-Dmodel_server_home={site}", f"-Djava.io.tmpdir={jtmp}", "-Xmx2g",
                  "-cp", f".:{site}/mms/frontend/*", "com.amazonaws.ml.mms.ModelServer",
                  "--python", str(py), "-f", str(home / "config.properties"), "-s", str(store)],
                 port, cwd=home, ready_path="/ping", log_path=home / "mms.log",
                 # the JVM resolves the venv's python symlink to the base interpreter, so the
                 # workers need the venv's site-packages on PYTHONPATH to import `mms`
                 env={"PYTHONPATH": site, "LOG_LOCATION": str(logs), "METRICS_LOCATION": str(logs),
                      "TEMP": str(jtmp), "TMPDIR": str(jtmp), "OMP_NUM_THREADS": str(omp_threads)})
    srv.mgmt = mport  # type: ignore[attr-defined]
    return srv


def mms_register(srv: Server, batch_size: int, delay_ms: int) -> None:
    regs = [("mlp", "mlp.mar", 1, 100), ("resnet18", "resnet18.mar", 1, 100),
            ("mobilenet", "mobilenet.mar", 1, 100),
            ("mlp_b", "mlp.mar", batch_size, delay_ms)]
    for name, url, bs, delay in regs:
        q = (f"url={url}&model_name={name}&initial_workers=2&synchronous=true"
             f"&batch_size={bs}&max_batch_delay={delay}")
        req = urllib.request.Request(f"http://127.0.0.1:{srv.mgmt}/models?{q}", method="POST")
        try:
            with urllib.request.urlopen(req, timeout=300) as r:
                r.read()
        except urllib.error.HTTPError as e:
            raise RuntimeError(f"MMS registration of {name} failed: HTTP {e.code} "
                               f"{e.read()[:500]!r}; log: {srv.tail_log()}") from None
    srv.remember()
