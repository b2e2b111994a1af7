"""Running wrk (``post.lua``) against one server for one case, with the CPU accounting of the
run, and waiting for the server to go idle afterwards."""
from __future__ import annotations

import json
import os
import re
import subprocess
import time

from servers import HERE, Server, cpu_ticks, loadavg, machine_busy_ticks
from workload import Body, Case

LUA = HERE / "post.lua"


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
