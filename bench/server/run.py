#!/usr/bin/env python
"""Load benchmark of the model server, side by side with MXNet Model Server, in one run.

    python bench/server/run.py [--duration 10s] [--quick] [--repeat N] [--profile] [--no-mms]

What it does (everything on 127.0.0.1, every process it starts is stopped by PID at the end):

1. Exports the models once with real MXNet 1.9.1 (``bench/server/mx_export.py`` in
   ``.mxnet-venvs/mxnet-1.9.1``): the demo MLP (512-256-128-2, the demo model's own weights,
   re-exported in the 1.x format) and ResNet-18 v1.  Both servers load these SAME files.
2. Starts the servers, each on a free loopback port: hybridserve with 1 and 2 uvicorn workers
   (store: ``mlp`` with dynamic batching as in model_store/mlp/config.json, ``mlp_nobatch``
   without, ``resnet18``), the FastAPI echo floor (``echo_app.py``) with 1 and 2 workers, and
   MXNet Model Server (multi-model-server 1.1.11, Java frontend, 2 Python workers per model;
   ``.mxnet-venvs/mms-1.1.11``) serving the same exports through model archives made with
   ``model-archiver`` and ``mms_handler.py``; ``mlp_b`` is the MLP registered with MMS batching.
3. Checks one answer of every (server, workload) against MXNet's own output, warms each, then
   runs ``wrk --latency`` with ``post.lua`` (``-t2 -cC``; ``-t1`` at C=1) for every case, all
   cases interleaved per pass so drift of the machine's load hits every server alike; repeats
   (``--repeat``) and re-runs cases whose repeats disagree by more than 25 %.
4. Prints a table and writes ``RESULTS.md`` (+ ``results.json``) next to this file: median
   req/s, p50/p99 per case, the 1-minute load average and the CPU that other processes used
   during each run, and the issue's targets (reported, not asserted).

``--profile`` additionally samples the 1-worker hybridserve process with py-spy under a few of
the loads (separate runs, not in the table) and writes stack summaries to ``profile/``.

Needs: ``wrk`` (``bash scripts/install_system_deps.sh``), the project venv (``.venv``), the
MXNet venv (``make interop`` builds it), and for the MMS columns Java 11+ and
``.mxnet-venvs/mms-1.1.11`` (``bash bench/server/setup_mms.sh``).  Without
MMS the issue's MMS figures are shown, labelled as not measured here.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
VENVS = Path(os.environ.get("HYBRIDSERVE_MXNET_VENV_DIR", ROOT / ".mxnet-venvs"))
MX_PY = VENVS / "mxnet-1.9.1" / "bin" / "python"
MMS_VENV = Path(os.environ.get("HYBRIDSERVE_MMS_VENV", VENVS / "mms-1.1.11"))
LUA = HERE / "post.lua"

# the issue's reference figures (2-core machine, wrk) -- shown when MMS cannot run here
ISSUE_REF = {
    "mms_mlp_json_c8": 1220.0, "mms_mlp_json_batched_c32": 2417.0, "mms_resnet_raw_c8": 51.0,
    "mlserver_mlp_c8": 1161.0, "fastapi_parse_only": 3300.0,
}

_live: list["Server"] = []          # servers to stop whatever happens
SRC = ROOT                          # where service/ and framework/ are run from (--git-ref)


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


# -- models and bodies ---------------------------------------------------------------------------
def project_python() -> str:
    py = ROOT / ".venv" / "bin" / "python"
    return str(py) if py.exists() else sys.executable


MLP_CONFIG = {
    "description": "demo MLP 512-256-128-2 re-exported by MXNet 1.9.1 (bench/server)",
    "inputs": [{"name": "data", "datatype": "FP32", "shape": [-1, 512]}],
    "outputs": [{"name": "output", "datatype": "FP32", "shape": [-1, 2]}],
    "max_batch_size": 64,
}
RESNET_CONFIG = {
    "description": "ResNet-18 v1 exported by MXNet 1.9.1 (bench/server)",
    "inputs": [{"name": "data", "datatype": "FP32", "shape": [-1, 3, 224, 224]}],
    "outputs": [{"name": "output", "datatype": "FP32", "shape": [-1, 1000]}],
    "max_batch_size": 8,
}


def export_models(tmp: Path) -> dict:
    """MXNet 1.9.1 exports of the demo MLP (its own weights) and ResNet-18 into tmp/export."""
    if not MX_PY.exists():
        raise SystemExit(f"no MXNet 1.9.1 venv at {MX_PY.parent.parent}: build it with "
                         "`make interop` (tests/interop) first")
    weights = tmp / "mlp-weights.npz"
    code = ("import sys, numpy as np\n"
            "from framework.io import load_params, strip_prefixes\n"
            "p = strip_prefixes(load_params(sys.argv[1]))\n"
            "np.savez(sys.argv[2], **{('w' if k.endswith('weight') else 'b') + k.split('.')[0]: v"
            " for k, v in p.items()})\n")
    subprocess.run([project_python(), "-c", code, str(SRC / "model_store/mlp/1/mlp-0000.params"),
                    str(weights)], cwd=SRC, check=True, timeout=120)
    out = subprocess.run([str(MX_PY), str(HERE / "mx_export.py"), str(tmp / "export"),
                          "--mlp-weights", str(weights)], capture_output=True, text=True,
                         check=True, timeout=600)
    return json.loads(out.stdout.strip().splitlines()[-1])


def build_store(tmp: Path, demo_cfg: dict) -> Path:
    store = tmp / "store"
    batching = demo_cfg.get("dynamic_batching") or {
        "max_queue_delay_microseconds": 1000, "preferred_batch_size": [8, 16, 32]}
    entries = {
        "mlp": ("mlp", {**MLP_CONFIG, "max_batch_size": demo_cfg.get("max_batch_size", 64),
                        "dynamic_batching": batching}),
        "mlp_nobatch": ("mlp", dict(MLP_CONFIG, max_batch_size=demo_cfg.get("max_batch_size", 64))),
        "resnet18": ("resnet18_v1", RESNET_CONFIG),
        # not in MMS's set: shows what dynamic batching does for a conv net (extra row)
        "resnet18_batch": ("resnet18_v1", {**RESNET_CONFIG, "dynamic_batching": {
            "max_queue_delay_microseconds": 5000, "preferred_batch_size": [4, 8]}}),
    }
    for name, (src, cfg) in entries.items():
        vdir = store / name / "1"
        vdir.mkdir(parents=True)
        for f in (tmp / "export" / src).iterdir():
            shutil.copy(f, vdir / f.name)
        (store / name / "config.json").write_text(json.dumps({"name": name, **cfg}, indent=2))
    return store


@dataclass
class Body:
    path: Path
    ctype: str
    hlen: int | None = None


def v2_json(x: np.ndarray) -> bytes:
    return json.dumps({"inputs": [{"name": "data", "shape": list(x.shape), "datatype": "FP32",
                                   "data": x.ravel().tolist()}]}).encode()


def v2_binary(x: np.ndarray) -> tuple[bytes, int]:
    raw = x.astype("<f4").tobytes()
    head = json.dumps({"inputs": [{"name": "data", "shape": list(x.shape), "datatype": "FP32",
                                   "parameters": {"binary_data_size": len(raw)}}],
                       "outputs": [{"name": "output", "parameters": {"binary_data": True}}]},
                      separators=(",", ":")).encode()
    return head + raw, len(head)


def write_bodies(tmp: Path) -> tuple[dict[str, Body], dict[str, np.ndarray]]:
    d = tmp / "bodies"
    d.mkdir()
    bodies, refs = {}, {}
    for model, npz in (("mlp", "mlp-io.npz"), ("resnet", "resnet18_v1-io.npz")):
        io = np.load(tmp / "export" / npz)
        x, refs[model] = io["data"].astype(np.float32), io["output"]
        (d / f"{model}.json").write_bytes(v2_json(x))
        bodies[f"{model}.json"] = Body(d / f"{model}.json", "application/json")
        blob, hlen = v2_binary(x)
        (d / f"{model}.bin").write_bytes(blob)
        bodies[f"{model}.bin"] = Body(d / f"{model}.bin", "application/octet-stream", hlen)
        (d / f"{model}.raw").write_bytes(x.astype("<f4").tobytes())
        bodies[f"{model}.raw"] = Body(d / f"{model}.raw", "application/octet-stream")
    return bodies, refs


# -- servers -------------------------------------------------------------------------------------
def hybridserve(key: str, workers: int, store: Path, tmp: Path, extra_env: dict,
                suffix: str = "") -> Server:
    port = free_port()
    return Server(key, f"hybridserve {workers}w{suffix}", [project_python(), "-m", "service",
                  "--model-store", str(store), "--host", "127.0.0.1", "--port", str(port),
                  "--workers", str(workers), "--log-level", "warning"], port,
                  env=extra_env, ready_path="/v2/health/ready", log_path=tmp / f"{key}.log")


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
                                        ("resnet18", "resnet18_v1", [3, 224, 224], 1)):
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


# -- cases ---------------------------------------------------------------------------------------
@dataclass
class Case:
    server: str
    model: str          # "MLP" / "ResNet-18"
    body: str           # "JSON" / "binary" / "raw f32"
    batching: str       # "on" / "off"
    conns: int
    path: str
    body_key: str
    ref: str            # "mlp" / "resnet" / "" (no check)
    results: list = field(default_factory=list)

    @property
    def id(self) -> str:
        return f"{self.server}|{self.model}|{self.body}|{self.batching}|c{self.conns}"


def make_cases(servers: list[str], quick: bool) -> list[Case]:
    cs: list[Case] = []
    hs_infer = "/v2/models/{}/infer"
    for s in servers:
        if not s.startswith("hs"):
            continue
        for c in (1, 8, 32):
            cs.append(Case(s, "MLP", "JSON", "on", c, hs_infer.format("mlp"), "mlp.json", "mlp"))
            cs.append(Case(s, "MLP", "binary", "on", c, hs_infer.format("mlp"), "mlp.bin", "mlp"))
            cs.append(Case(s, "MLP", "JSON", "off", c, hs_infer.format("mlp_nobatch"), "mlp.json",
                           "mlp"))
        cs.append(Case(s, "MLP", "binary", "off", 32, hs_infer.format("mlp_nobatch"), "mlp.bin",
                       "mlp"))
        for c in (1, 8):
            cs.append(Case(s, "ResNet-18", "binary", "off", c, hs_infer.format("resnet18"),
                           "resnet.bin", "resnet"))
        cs.append(Case(s, "ResNet-18", "binary", "on", 8, hs_infer.format("resnet18_batch"),
                       "resnet.bin", "resnet"))
    if "mms" in servers:
        for c in (1, 8, 32):
            cs.append(Case("mms", "MLP", "JSON", "off", c, "/predictions/mlp", "mlp.json", "mlp"))
        cs.append(Case("mms", "MLP", "JSON", "on", 32, "/predictions/mlp_b", "mlp.json", "mlp"))
        cs.append(Case("mms", "MLP", "raw f32", "off", 8, "/predictions/mlp", "mlp.raw", "mlp"))
        for c in (1, 8):
            cs.append(Case("mms", "ResNet-18", "raw f32", "off", c, "/predictions/resnet18",
                           "resnet.raw", "resnet"))
    for s in ("echo1", "echo2"):
        if s in servers:
            for c in (1, 8, 32):
                cs.append(Case(s, "MLP", "JSON", "-", c, "/v2/models/mlp/infer", "mlp.json", ""))
    # comparable cases (same model and concurrency) run back to back, so that the ratios the
    # targets need are taken from runs a few seconds apart (paired), not minutes apart
    cs.sort(key=group)
    return cs


def group(c: Case) -> tuple:
    return (c.model != "MLP", c.conns)


def parse_duration(s: str) -> float:
    m = re.fullmatch(r"(\d+(?:\.\d+)?)(ms|s|m)?", s.strip())
    if not m:
        raise argparse.ArgumentTypeError(f"bad duration {s!r} (e.g. 10s)")
    v = float(m[1])
    return v / 1000 if m[2] == "ms" else v * 60 if m[2] == "m" else v


def check_answer(srv: Server, case: Case, bodies: dict[str, Body],
                 refs: dict[str, np.ndarray]) -> str:
    """One request outside wrk: the answer must be 200 and (for models) match MXNet's output."""
    b = bodies[case.body_key]
    headers = {"Content-Type": b.ctype}
    if b.hlen is not None:
        headers["Inference-Header-Content-Length"] = str(b.hlen)
    req = urllib.request.Request(srv.base + case.path, data=b.path.read_bytes(), headers=headers,
                                 method="POST")
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            data, hl = r.read(), r.headers.get("Inference-Header-Content-Length")
    except urllib.error.HTTPError as e:
        raise RuntimeError(f"{case.id}: HTTP {e.code}: {e.read()[:300]!r}") from None
    if not case.ref:
        return "200"
    want = refs[case.ref]
    if hl is not None:
        head = json.loads(data[:int(hl)])
        got = np.frombuffer(data[int(hl):], "<f4").reshape(head["outputs"][0]["shape"])
    elif data[:1] == b"{":
        out = json.loads(data)["outputs"][0]
        got = np.asarray(out["data"], np.float32).reshape(out["shape"])
    else:
        got = np.frombuffer(data, "<f4").reshape(want.shape)
    err = float(np.max(np.abs(got - want)))
    tol = 1e-4 + 1e-3 * float(np.max(np.abs(want)))
    if got.shape != want.shape or not err <= tol:
        raise RuntimeError(f"{case.id}: answer differs from MXNet's (max |diff| {err:.3g})")
    return f"max|diff| {err:.1e}"


def run_wrk(srv: Server, case: Case, bodies: dict[str, Body], seconds: float) -> dict:
    b = bodies[case.body_key]
    env = dict(os.environ, WRK_BODY=str(b.path), WRK_CTYPE=b.ctype, WRK_PATH=case.path,
               WRK_HLEN="" if b.hlen is None else str(b.hlen))
    threads = 1 if case.conns == 1 else 2
    cmd = ["wrk", f"-t{threads}", f"-c{case.conns}", f"-d{seconds:g}s", "--timeout", "10s",
           "--latency", "-s", str(LUA), srv.base]
    pids = srv.pids()
    la = loadavg()
    busy0, steal0, tot0 = machine_busy_ticks()
    srv0 = cpu_ticks(pids)
    ours0 = srv0 + cpu_ticks([os.getpid()])
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = p.communicate(timeout=seconds + 60)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        raise RuntimeError(f"wrk did not finish: {case.id}")
    wall = time.monotonic() - t0
    busy1, steal1, tot1 = machine_busy_ticks()
    srv1 = cpu_ticks(pids)
    ours1 = srv1 + cpu_ticks([os.getpid()])   # run.py's ticks include the waited-for wrk
    hz = os.sysconf("SC_CLK_TCK")
    ncpu = os.cpu_count() or 1
    machine_cores = (busy1 - busy0) / max(1, tot1 - tot0) * ncpu
    steal = (steal1 - steal0) / max(1, tot1 - tot0) * ncpu
    ours = (ours1 - ours0) / hz / wall
    m = re.search(r"^WRKJSON (.*)$", out, re.M)
    if p.returncode != 0 or not m:
        raise RuntimeError(f"wrk failed for {case.id}: rc={p.returncode} {err.strip()[:500]}")
    r = json.loads(m[1])
    e = r["errors"]
    settled = settle(srv)
    return {"settle_s": round(settled, 2), "rps": r["requests"] / (r["duration_us"] / 1e6), "requests": r["requests"],
            "p50_ms": r["latency_us"]["p50"] / 1000, "p99_ms": r["latency_us"]["p99"] / 1000,
            "p90_ms": r["latency_us"]["p90"] / 1000, "max_ms": r["latency_us"]["max"] / 1000,
            "errors": sum(e.values()), "non2xx": e["status"], "loadavg": la,
            "other_cores": round(max(0.0, machine_cores - ours), 2), "ours_cores": round(ours, 2),
            "server_cores": round((srv1 - srv0) / hz / wall, 2),
            "steal_cores": round(steal, 2)}


def settle(srv: Server, limit: float = 60.0) -> float:
    """Wait until the server is idle (< 5 % of a core over 0.3 s): requests wrk gave up on can
    still be computing (a ResNet queue), and must not load the next case. Seconds waited."""
    t0 = time.monotonic()
    hz = os.sysconf("SC_CLK_TCK")
    pids = srv.pids()
    while time.monotonic() - t0 < limit:
        a = cpu_ticks(pids)
        time.sleep(0.3)
        if (cpu_ticks(pids) - a) / hz < 0.05 * 0.3:
            break
    return time.monotonic() - t0


# -- profiling -----------------------------------------------------------------------------------
def py_spy() -> str | None:
    for c in (shutil.which("py-spy"), ROOT / ".venv/bin/py-spy", MMS_VENV / "bin/py-spy"):
        if c and Path(c).exists():
            return str(c)
    return None


def summarize_stacks(raw: Path, top: int = 25) -> str:
    """py-spy --format raw (collapsed stacks) → self and inclusive time per function, and
    shares by area (uvicorn/httptools, asyncio, service, framework, numpy, ...)."""
    self_t: dict[str, int] = {}
    incl: dict[str, int] = {}
    area: dict[str, int] = {}
    total = 0
    for line in raw.read_text(errors="replace").splitlines():
        stack, _, n = line.rpartition(" ")
        if not n.isdigit():
            continue
        n = int(n)
        total += n
        frames = [re.sub(r":\d+\)$", ")", f) for f in stack.split(";")]
        frames = [f for f in frames if not f.startswith(("process ", "thread "))]
        if not frames:
            continue
        leaf = frames[-1]
        self_t[leaf] = self_t.get(leaf, 0) + n
        for f in set(frames):
            incl[f] = incl.get(f, 0) + n
        a = _area(frames)
        area[a] = area.get(a, 0) + n
    if not total:
        return "(no samples)\n"

    def short(f: str) -> str:
        f = f.replace(str(ROOT) + "/", "")
        return re.sub(r"\(/[^)]*/site-packages/", "(", f)

    lines = [f"samples: {total}", "", "by area (leaf frame's file):"]
    lines += [f"  {100 * v / total:5.1f}%  {k}" for k, v in sorted(area.items(), key=lambda kv: -kv[1])]
    lines += ["", f"top {top} self:"]
    lines += [f"  {100 * v / total:5.1f}%  {short(k)}"
              for k, v in sorted(self_t.items(), key=lambda kv: -kv[1])[:top]]
    lines += ["", f"top {top} inclusive:"]
    lines += [f"  {100 * v / total:5.1f}%  {short(k)}"
              for k, v in sorted(incl.items(), key=lambda kv: -kv[1])[:top]]
    return "\n".join(lines) + "\n"


_AREAS = [(r"framework/ops/", "framework ops (model compute)"),
          (r"framework/", "framework (other)"), (r"service/", "service/ (server code)"),
          (r"numpy/", "numpy (python side)"), (r"uvicorn/", "uvicorn"),
          (r"starlette/", "starlette/fastapi"), (r"fastapi/", "starlette/fastapi"),
          (r"asyncio/", "asyncio"), (r"uvloop/", "uvloop"), (r"prometheus_client/", "prometheus"),
          (r"concurrent/", "thread pool"), (r"threading.py", "thread pool"),
          (r"json/", "json"), (r"orjson", "orjson"), (r"<hybridserve plan>", "framework (other)")]


def _area(frames: list[str]) -> str:
    leaf = frames[-1]
    where = leaf.rsplit("(", 1)[-1] if "(" in leaf else leaf
    for needle, name in _AREAS:
        if needle in where:
            return name
    return "other: " + re.sub(r".*/", "", where).rstrip(")")


def profile(servers: dict[str, Server], cases: list[Case], bodies: dict[str, Body],
            seconds: float, outdir: Path, rawdir: Path) -> dict[str, str]:
    spy = py_spy()
    if spy is None:
        return {"error": "py-spy not found (pip install py-spy)"}
    outdir.mkdir(exist_ok=True)
    wanted = [("hs1", "MLP", "JSON", "on", 8), ("hs1", "MLP", "JSON", "off", 32),
              ("hs1", "MLP", "JSON", "on", 32), ("hs1", "MLP", "binary", "on", 32),
              ("hs1", "ResNet-18", "binary", "off", 8)]
    summaries = {}
    for w in wanted:
        case = next((c for c in cases if (c.server, c.model, c.body, c.batching, c.conns) == w), None)
        if case is None or case.server not in servers:
            continue
        srv = servers[case.server]
        name = re.sub(r"[^A-Za-z0-9]+", "_", case.id).strip("_")
        raw = rawdir / f"{name}.txt"          # collapsed stacks stay in the temp dir
        spy_p = subprocess.Popen([spy, "record", "--pid", str(srv.proc.pid), "--duration",
                                  str(int(seconds)), "--rate", "200", "--format", "raw",
                                  "--nonblocking", "--output", str(raw)],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        time.sleep(0.5)
        r = run_wrk(srv, case, bodies, seconds)
        try:
            _, err = spy_p.communicate(timeout=seconds + 60)
        except subprocess.TimeoutExpired:
            spy_p.kill()
            _, err = spy_p.communicate()
        if not raw.exists():
            summaries[case.id] = f"py-spy failed: {err.strip()[:500]}"
            continue
        text = (f"{case.id}: {r['rps']:.0f} req/s under py-spy (rate 200 Hz, nonblocking)\n"
                + summarize_stacks(raw))
        (outdir / f"{name}.summary.txt").write_text(text)
        summaries[case.id] = text
        log(f"profiled {case.id} → {outdir / (name + '.summary.txt')}")
    return summaries


# -- report --------------------------------------------------------------------------------------
def med(case: Case, k: str) -> float | None:
    vals = [r[k] for r in case.results if r.get(k) is not None]
    return statistics.median(vals) if vals else None


def fmt(v: float | None, nd: int = 0) -> str:
    return "—" if v is None else f"{v:,.{nd}f}".replace(",", " ")


def find(cases: list[Case], server: str, model: str, body: str, batching: str, c: int):
    for x in cases:
        if (x.server, x.model, x.body, x.batching, x.conns) == (server, model, body, batching, c) \
                and x.results:
            return x
    return None


def paired(a: Case | None, b: Case | None, key: str = "rps", op=lambda x, y: x / y):
    """op(a_i, b_i) over the runs of a and b made in the same round (a few seconds apart):
    (median, min, max), or None."""
    if a is None or b is None:
        return None
    vals = [op(x[key], y[key]) for x, y in zip(a.results, b.results) if y[key]]
    return (statistics.median(vals), min(vals), max(vals)) if vals else None


def targets(cases: list[Case], mms_ok: bool, labels: dict[str, str] | None = None) -> list[dict]:
    """The issue's targets, each from paired runs (same round, back to back)."""
    out = []
    labels = labels or {}
    src = "MMS in this run" if mms_ok else "issue's reference figure, not measured here"

    def ratio_row(name, a, b, need, ref=None):
        if a is None:
            return
        if ref is not None:                       # no MMS here: the issue's figure
            v = med(a, "rps")
            out.append({"target": name, "value": f"{v:.0f} / {ref:.0f} = {v / ref:.2f}×",
                        "met": v >= need * ref})
            return
        pr = paired(a, b)
        if pr is None:
            return
        m, lo, hi = pr
        out.append({"target": name,
                    "value": f"{med(a, 'rps'):.0f} / {med(b, 'rps'):.0f} req/s; paired ratio "
                             f"{m:.2f}× (runs {lo:.2f}–{hi:.2f})",
                    "met": m >= need})

    for key in sorted({c.server for c in cases if c.server.startswith("hs")}):
        hs, w = labels.get(key, key), key[2:]
        mms_json8 = find(cases, "mms", "MLP", "JSON", "off", 8)
        for body in ("JSON", "binary"):
            ratio_row(f"MLP c=8 ≥ 2× MMS ({hs}, {body} body, batching on; vs MMS JSON, {src})",
                      find(cases, key, "MLP", body, "on", 8), mms_json8, 2.0,
                      None if mms_ok else ISSUE_REF["mms_mlp_json_c8"])
        ratio_row(f"ResNet-18 binary c=8 ≥ 1.3× MMS raw float32 ({hs}; {src})",
                  find(cases, key, "ResNet-18", "binary", "off", 8),
                  find(cases, "mms", "ResNet-18", "raw f32", "off", 8), 1.3,
                  None if mms_ok else ISSUE_REF["mms_resnet_raw_c8"])
        for body in ("JSON", "binary"):
            ratio_row(f"dynamic batching ≥ 3× unbatched, MLP c=32 ({hs}, {body})",
                      find(cases, key, "MLP", body, "on", 32),
                      find(cases, key, "MLP", body, "off", 32), 3.0)
        echo = "echo1" if w == "1" else "echo2" if w == "2" else None
        a, e = find(cases, key, "MLP", "JSON", "on", 1), find(cases, echo or "", "MLP", "JSON", "-", 1)
        pr = paired(a, e, "p99_ms", lambda x, y: x - y)
        if pr is not None:
            m, lo, hi = pr
            out.append({"target": f"MLP p99 at c=1 within 2 ms of the echo floor ({hs} vs "
                                  f"{labels.get(echo, echo)}, JSON)",
                        "value": f"{med(a, 'p99_ms'):.2f} ms vs {med(e, 'p99_ms'):.2f} ms; paired "
                                 f"difference {m:+.2f} ms (runs {lo:+.2f} … {hi:+.2f})",
                        "met": m <= 2.0})
    if mms_ok:
        pr = paired(find(cases, "hs1", "MLP", "JSON", "on", 32), find(cases, "mms", "MLP", "JSON", "on", 32))
        if pr:
            out.append({"target": "(info) batched MLP c=32, hybridserve 1w vs MMS with its batching",
                        "value": f"paired ratio {pr[0]:.2f}× (runs {pr[1]:.2f}–{pr[2]:.2f})",
                        "met": None})
        pr = paired(find(cases, "hs1", "MLP", "JSON", "on", 8), find(cases, "echo1", "MLP", "JSON", "-", 8))
        if pr:
            out.append({"target": "(info) MLP JSON c=8, hybridserve 1w vs the FastAPI echo floor (1w)",
                        "value": f"paired ratio {pr[0]:.2f}× (runs {pr[1]:.2f}–{pr[2]:.2f})",
                        "met": None})
    return out


def render(cases: list[Case], servers: dict[str, Server], meta: dict, tgts: list[dict],
           mms_note: str | None, profiles: dict[str, str]) -> str:
    L = ["## Load benchmark (bench/server)", "",
         f"`python bench/server/run.py {meta.get('argv') or ''}`".replace(" `", "`") + " — "
         f"{meta['date']}, commit `{meta['commit']}`, {meta['cpu']} ({meta['cpus']} cores), "
         f"Python {meta['python']}, wrk `-t2 -cC --latency` (`-t1` at C=1), "
         f"{meta['duration']:g} s per run, loopback. Every server loads the same MXNet 1.9.1 "
         "export (the demo MLP 512-256-128-2 with its own weights; ResNet-18 v1, batch 1, "
         "FP32 1×3×224×224); every answer was checked against MXNet's output before timing.",
         "",
         f"Load average (1 min) at start: {meta['load_start']}, at end: {meta['load_end']}. "
         "The machine is shared: *other cores* is the CPU (in cores, of 2) that processes other "
         "than the server under test, wrk and this script used during the run; runs with "
         "more than ~0.3 there are disturbed; *server cores* is what the server under test "
         "itself used (wrk needs most of the rest: on 2 cores the load generator and the "
         "server share the machine). req/s, p50 and p99 are medians over the repeats "
         "(`runs` = repeats, all values in results.json).", ""]
    L += ["| server | model | body | batching | c | req/s | p50 ms | p99 ms | errors | runs (req/s) | load avg | other cores | server cores |",
          "|---|---|---|---|---:|---:|---:|---:|---:|---|---:|---:|---:|"]
    for c in cases:
        if not c.results:
            continue
        runs = ", ".join(f"{r['rps']:.0f}" for r in c.results)
        L.append(f"| {servers[c.server].label} | {c.model} | {c.body} | {c.batching} | {c.conns} | "
                 f"{fmt(med(c, 'rps'))} | {fmt(med(c, 'p50_ms'), 2)} | {fmt(med(c, 'p99_ms'), 2)} | "
                 f"{sum(r['errors'] for r in c.results)} | {runs} | "
                 f"{fmt(med(c, 'loadavg'), 1)} | {fmt(med(c, 'other_cores'), 2)} | "
                 f"{fmt(med(c, 'server_cores'), 2)} |")
    L += ["", "hybridserve: `mlp` has dynamic batching as in model_store/mlp/config.json "
          "(max_batch_size 64, 1 000 µs, preferred 8/16/32), `mlp_nobatch` none; binary = "
          "Triton binary tensor extension both ways. MMS (multi-model-server 1.1.11, the PyPI "
          "name of MXNet Model Server since 1.1): 2 Python workers per model, handler "
          "`bench/server/mms_handler.py` (SymbolBlock.imports + hybridize(static_alloc), v2 "
          f"JSON decoded by MMS, or raw float32 bytes), OMP_NUM_THREADS={meta['mms_omp']}; "
          f"batching = `batch_size={meta['mms_batch']}&max_batch_delay={meta['mms_delay']}` (ms) "
          "at registration. Echo = `bench/server/echo_app.py` (FastAPI route, orjson parse of "
          "the MLP JSON body into a float32 array, constant answer).", ""]
    if mms_note:
        L += [f"**MMS was not measured here**: {mms_note}", ""]
    L += ["### Targets (issue 5; reported, not asserted)", "",
          "Each ratio pairs runs of the same round (the cases of one model and concurrency run "
          "back to back), then takes the median, so slow drift of the machine's load cancels.", "",
          "| target | measured | met |", "|---|---|---|"]
    for t in tgts:
        met = "—" if t["met"] is None else ("yes" if t["met"] else "**no**")
        L.append(f"| {t['target']} | {t['value']} | {met} |")
    L += ["", "Issue's reference figures (2-core machine, wrk; **not measured here**): MMS 1.1.11 "
          "2 workers — MLP JSON 1 220 req/s at c=8, 2 417 at c=32 with batching, ResNet-18 raw "
          "float32 51 req/s at c=8; MLServer 1.7.1 — MLP 1 161 req/s at c=8; bare FastAPI "
          "parse-only — 3 300 req/s.", ""]
    if profiles:
        L += ["### Profiles (py-spy, hybridserve 1 worker; separate runs)", ""]
        for k, v in profiles.items():
            head = "\n".join(v.splitlines()[:22])
            L += [f"`{k}`", "", "```", head, "```", ""]
    return "\n".join(L) + "\n"


def print_table(cases: list[Case], servers: dict[str, Server]) -> None:
    w = max([len(s.label) for s in servers.values()] + [6]) + 2
    print(f"\n{'server':<{w}}{'model':<11}{'body':<9}{'batch':<6}{'c':>4}{'req/s':>10}"
          f"{'p50 ms':>9}{'p99 ms':>9}{'err':>5}{'load':>6}{'other':>7}  runs")
    for c in cases:
        if not c.results:
            continue
        print(f"{servers[c.server].label:<{w}}{c.model:<11}{c.body:<9}{c.batching:<6}{c.conns:>4}"
              f"{fmt(med(c, 'rps')):>10}{fmt(med(c, 'p50_ms'), 2):>9}{fmt(med(c, 'p99_ms'), 2):>9}"
              f"{sum(r['errors'] for r in c.results):>5}{fmt(med(c, 'loadavg'), 1):>6}"
              f"{fmt(med(c, 'other_cores'), 2):>7}  "
              + ", ".join(f"{r['rps']:.0f}" for r in c.results))


# -- main ----------------------------------------------------------------------------------------
def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--duration", type=parse_duration, default=None, help="per wrk run (10s)")
    ap.add_argument("--quick", action="store_true", help="3 s runs, 1 repeat, no re-runs")
    ap.add_argument("--repeat", type=int, default=None, help="passes over all cases (2)")
    ap.add_argument("--no-mms", action="store_true", help="skip MMS (show the issue's figures)")
    ap.add_argument("--servers", default="hs1,hs2,mms,echo1,echo2",
                    help="subset of hs1,hs2,mms,echo1,echo2")
    ap.add_argument("--only", default="", help="run only cases whose id contains this")
    ap.add_argument("--profile", action="store_true", help="py-spy the 1-worker hybridserve")
    ap.add_argument("--mms-omp-threads", type=int, default=1,
                    help="OMP_NUM_THREADS of MMS's workers (2 workers x 1 = the 2 cores)")
    ap.add_argument("--mms-batch-size", type=int, default=16)
    ap.add_argument("--mms-batch-delay-ms", type=int, default=1)
    ap.add_argument("--hs-env", action="append", default=[], metavar="K=V",
                    help="extra HYBRIDSERVE_* environment for the hybridserve servers")
    ap.add_argument("--variant", action="append", default=[], metavar="WORKERS:K=V[,K=V]",
                    help="one more hybridserve server (same cases) with this environment, e.g. "
                         "1:HYBRIDSERVE_BLAS_THREADS=1 (repeatable)")
    ap.add_argument("--git-ref", default=None,
                    help="run service/ and framework/ from `git archive REF` (e.g. HEAD) instead "
                         "of the working tree, so edits in progress cannot change the numbers")
    ap.add_argument("--out", type=Path, default=HERE / "RESULTS.md")
    ap.add_argument("--keep-tmp", action="store_true")
    ap.add_argument("--render", type=Path, metavar="JSON",
                    help="only re-write --out from a results JSON of an earlier run")
    args = ap.parse_args()
    if args.render:
        return rerender(args.render, args.out)
    seconds = args.duration or (3.0 if args.quick else 10.0)
    repeat = args.repeat or (1 if args.quick else 2)
    wanted = [s.strip() for s in args.servers.split(",") if s.strip()]
    if args.no_mms and "mms" in wanted:
        wanted.remove("mms")

    if shutil.which("wrk") is None:
        print("wrk not found: install it with `bash scripts/install_system_deps.sh` "
              "(Debian package `wrk`)", file=sys.stderr)
        return 2
    def _interrupt(*_):
        raise KeyboardInterrupt
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _interrupt)

    tmp = Path(tempfile.mkdtemp(prefix="hsb-", dir="/tmp"))   # short: MMS unix socket paths
    global SRC
    if args.git_ref:
        SRC = tmp / "src"
        SRC.mkdir()
        arch = subprocess.run(["git", "-C", str(ROOT), "archive", args.git_ref, "service",
                               "framework", "model_store"], capture_output=True, check=True,
                              timeout=120).stdout
        subprocess.run(["tar", "-x", "-C", str(SRC)], input=arch, check=True, timeout=120)
    servers: dict[str, Server] = {}
    mms_note = None
    meta = {"date": _dt.datetime.now().strftime("%Y-%m-%d %H:%M"), "duration": seconds,
            "repeat": repeat, "python": platform.python_version(), "cpus": os.cpu_count(),
            "cpu": _cpu_name(), "commit": _commit(args.git_ref), "load_start": loadavg(),
            "mms_omp": args.mms_omp_threads, "mms_batch": args.mms_batch_size,
            "mms_delay": args.mms_batch_delay_ms, "profiled": args.profile,
            "argv": " ".join(sys.argv[1:])}
    profiles: dict[str, str] = {}
    try:
        log(f"exporting the models with MXNet 1.9.1 into {tmp}")
        export_models(tmp)
        demo_cfg = json.loads((SRC / "model_store/mlp/config.json").read_text())
        store = build_store(tmp, demo_cfg)
        bodies, refs = write_bodies(tmp)
        hs_env = dict(kv.split("=", 1) for kv in args.hs_env)

        if "mms" in wanted:
            why = mms_available()
            if why:
                mms_note = why
                wanted.remove("mms")
        makers = {"hs1": lambda: hybridserve("hs1", 1, store, tmp, hs_env),
                  "hs2": lambda: hybridserve("hs2", 2, store, tmp, hs_env),
                  "echo1": lambda: echo("echo1", 1, tmp), "echo2": lambda: echo("echo2", 2, tmp),
                  "mms": lambda: mms_server(tmp, args.mms_omp_threads)}
        for k, v in enumerate(args.variant):
            w, _, kvs = v.partition(":")
            venv = dict(hs_env, **dict(kv.split("=", 1) for kv in kvs.split(",") if kv))
            key = f"hsv{k}"
            makers[key] = (lambda key=key, w=int(w), venv=venv, kvs=kvs:
                           hybridserve(key, w, store, tmp, venv, f" ({kvs})"))
            wanted.append(key)
        for key in wanted:
            srv = makers[key]()
            log(f"starting {srv.label} on port {srv.port}")
            srv.start()
            servers[key] = srv
        for key, srv in list(servers.items()):
            try:
                srv.wait_ready(240)
                if key == "mms":
                    mms_register(srv, args.mms_batch_size, args.mms_batch_delay_ms)
                log(f"{srv.label} ready (pids {srv.pids()})")
            except Exception as e:  # noqa: BLE001
                if key != "mms":
                    raise
                mms_note = f"MMS did not start: {e}"[:3000]
                log(mms_note)
                srv.stop()
                del servers[key]

        cases = [c for c in make_cases(list(servers), args.quick) if args.only in c.id]
        # correctness first, then warm every case at its own concurrency: hybridserve's compiled
        # specialisations are per thread and per batch size, so a batching server keeps
        # compiling until it has seen the batch sizes of that load on each of its threads
        for c in cases:
            srv = servers[c.server]
            log(f"check {c.id}: {check_answer(srv, c, bodies, refs)}")
            r = run_wrk(srv, c, bodies, min(seconds, 2.0) if c.model == "MLP" else 8.0)
            log(f"warm  {c.id}: {r['rps']:.0f} req/s")
        for rep in range(repeat):
            for c in cases:
                c.results.append(run_wrk(servers[c.server], c, bodies, seconds))
                r = c.results[-1]
                log(f"pass {rep + 1}/{repeat} {c.id}: {r['rps']:.0f} req/s p50 {r['p50_ms']:.2f} "
                    f"p99 {r['p99_ms']:.2f} ms, errors {r['errors']}, load {r['loadavg']:.1f}, "
                    f"other {r['other_cores']:.2f} cores")
        if repeat >= 2 and not args.quick:
            for extra in range(2):
                # a noisy case re-runs with its whole group, so paired ratios stay paired
                noisy = {group(c) for c in cases
                         if max(r["rps"] for r in c.results) > 1.25 * min(r["rps"] for r in c.results)}
                if not noisy:
                    break
                rerun = [c for c in cases if group(c) in noisy]
                log(f"re-running {len(rerun)} case(s) of {len(noisy)} noisy group(s)")
                for c in rerun:
                    c.results.append(run_wrk(servers[c.server], c, bodies, seconds))
                    r = c.results[-1]
                    runs = ", ".join(f"{x['rps']:.0f}" for x in c.results)
                    log(f"re-run {c.id}: {r['rps']:.0f} req/s (runs: {runs})")
        if args.profile:
            profiles = profile(servers, cases, bodies, min(seconds, 8.0), HERE / "profile",
                               tmp if not args.keep_tmp else tmp)
        meta["load_end"] = loadavg()
        mms_ok = "mms" in servers
        tgts = targets(cases, mms_ok, {k: v.label for k, v in servers.items()})
        print_table(cases, servers)
        print()
        for t in tgts:
            met = "info" if t["met"] is None else ("MET " if t["met"] else "MISS")
            print(f"[{met}] {t['target']}: {t['value']}")
        md = render(cases, servers, meta, tgts, mms_note, profiles)
        args.out.write_text(md)
        jpath = args.out.with_name(args.out.stem.lower() + ".json")
        jpath.write_text(json.dumps(
            {"meta": meta, "mms_note": mms_note, "targets": tgts,
             "cases": [{"id": c.id, "server": servers[c.server].label, "model": c.model,
                        "body": c.body, "batching": c.batching, "conns": c.conns,
                        "runs": c.results} for c in cases]}, indent=1))
        log(f"wrote {args.out} and {jpath.name}")
        return 0
    except KeyboardInterrupt:
        log("interrupted")
        return 130
    finally:
        stop_all()
        if args.keep_tmp:
            log(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


def rerender(jpath: Path, out: Path) -> int:
    """RESULTS.md again from a results JSON (e.g. after changing the report's wording)."""
    d = json.loads(jpath.read_text())
    cases, labels = [], {}
    for c in d["cases"]:
        key = c["id"].split("|")[0]
        labels[key] = c["server"]
        x = Case(key, c["model"], c["body"], c["batching"], c["conns"], "", "", "")
        x.results = c["runs"]
        cases.append(x)
    servers = {k: Server(k, v, [], 0) for k, v in labels.items()}
    meta = {"mms_omp": 1, "mms_batch": 16, "mms_delay": 1, "load_end": "?", **d["meta"]}
    profiles = {}
    for f in sorted((HERE / "profile").glob("*.summary.txt")) if d["meta"].get("profiled") else []:
        text = f.read_text()
        profiles[text.split(":", 1)[0]] = text
    tgts = targets(cases, "mms" in labels, labels)
    out.write_text(render(cases, servers, meta, tgts, d.get("mms_note"), profiles))
    print(f"wrote {out}")
    return 0


def _cpu_name() -> str:
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.machine()


def _commit(ref: str | None) -> str:
    try:
        out = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", ref or "HEAD"],
                             capture_output=True, text=True, timeout=10).stdout.strip()
        if ref:
            return out
        dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "service",
                                "framework"], capture_output=True, text=True, timeout=10).stdout
        return out + ("+dirty" if dirty.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return "?"


if __name__ == "__main__":
    sys.exit(main())
