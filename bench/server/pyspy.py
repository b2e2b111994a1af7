"""``--profile``: py-spy stack samples of the 1-worker hybridserve under a few loads, summarised
by area and by function into bench/server/profile/."""
from __future__ import annotations

import re
import shutil
import subprocess
import time
from pathlib import Path

from servers import MMS_VENV, ROOT, Server, log
from workload import Body, Case
from wrk import run_wrk

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
