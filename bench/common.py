"""Shared helpers for the benchmarks: the MXNet reference venv, timing, machine facts."""
from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
MX_VENVS = Path(os.environ.get("HYBRIDSERVE_MXNET_VENV_DIR", ROOT / ".mxnet-venvs"))


def mxnet_python(version: str = "1.9.1") -> Path | None:
    py = MX_VENVS / f"mxnet-{version}" / "bin" / "python"
    return py if py.exists() else None


def run_mxnet_side(script: str, *args: str, version: str = "1.9.1", env: dict | None = None) -> dict | None:
    """Run a script of bench/mxnet_side with the MXNet venv; its stdout is one JSON document."""
    py = mxnet_python(version)
    if py is None:
        return None
    e = dict(os.environ)
    e.update(env or {})
    out = subprocess.run([str(py), str(ROOT / "bench" / "mxnet_side" / script), *args],
                         capture_output=True, text=True, env=e, check=True)
    return json.loads(out.stdout)


def per_call_us(fn: Callable[[], object], calls: int, repeats: int, warmup: int = 50,
                clock: Callable[[], float] = time.perf_counter) -> dict:
    """Median/min microseconds per call over `repeats` runs of `calls` (`clock`: wall time, or
    e.g. time.process_time for the CPU time of the whole process)."""
    for _ in range(warmup):
        fn()
    reps = []
    for _ in range(repeats):
        t0 = clock()
        for _ in range(calls):
            fn()
        reps.append((clock() - t0) / calls * 1e6)
    return {"median_us": round(statistics.median(reps), 2), "min_us": round(min(reps), 2),
            "repeats_us": [round(r, 2) for r in reps]}


def machine() -> dict:
    info = {"python": platform.python_version(), "cpus": os.cpu_count(),
            "machine": platform.machine()}
    if hasattr(sys, "_is_gil_enabled"):          # 3.13+: say which build the figures come from
        info["gil"] = sys._is_gil_enabled()
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                info["cpu"] = line.split(":", 1)[1].strip()
                break
        info["loadavg"] = open("/proc/loadavg").read().split()[:3]
    except OSError:
        pass
    try:
        import numpy
        from threadpoolctl import threadpool_info
        info["numpy"] = numpy.__version__
        info["blas"] = [{k: d.get(k) for k in ("internal_api", "version", "num_threads", "architecture")}
                        for d in threadpool_info()]
    except Exception:  # noqa: BLE001
        pass
    return info


def sys_path_root() -> None:
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
