"""Bounded loopback load: a mix of inference (JSON and binary), metadata, summaries and health,
from wrk (Debian's package, with a Lua script) or, where wrk is missing, an asyncio httpx client
run as a separate process (`python loadgen.py URL SECONDS CONCURRENCY`).

Both report {"requests", "errors", "statuses", "p50_ms", "p99_ms", "max_ms", "rps"}.
"""
from __future__ import annotations

import asyncio
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

WRK = shutil.which("wrk")


def requests_mix() -> list[tuple[str, str, dict, bytes]]:
    """(method, path, headers, body): 10 slots, so weights are tenths."""
    x = np.random.default_rng(0).standard_normal((1, 512), dtype=np.float32)
    mlp = json.dumps({"inputs": [{"name": "data", "shape": [1, 512], "datatype": "FP32",
                                  "data": x.ravel().tolist()}]}).encode()
    img = np.random.default_rng(1).standard_normal((1, 1, 28, 28), dtype=np.float32).tobytes()
    head = json.dumps({"inputs": [{"name": "data", "shape": [1, 1, 28, 28], "datatype": "FP32",
                                   "parameters": {"binary_data_size": len(img)}}],
                       "outputs": [{"name": "output", "parameters": {"binary_data": True}}]
                       }).encode()
    jh = {"Content-Type": "application/json"}
    bh = {"Content-Type": "application/octet-stream",
          "Inference-Header-Content-Length": str(len(head))}
    infer_mlp = ("POST", "/v2/models/mlp/infer", jh, mlp)
    return [infer_mlp, infer_mlp, infer_mlp, infer_mlp, infer_mlp,
            ("POST", "/v2/models/lenet/infer", bh, head + img),
            ("POST", "/v2/models/lenet/infer", bh, head + img),
            ("GET", "/v2/models/mlp", {}, b""),
            ("GET", "/v2/models/lenet/summary", {}, b""),
            ("GET", "/v2/models/mlp/summary?format=text", {}, b"")]


def _percentile(xs: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(xs), q)) if xs else 0.0


async def _client(url: str, seconds: float, concurrency: int) -> dict:
    import httpx
    mix = requests_mix()
    lat: list[float] = []
    statuses: dict[str, int] = {}
    end = time.perf_counter() + seconds

    async def worker(k: int, c: httpx.AsyncClient) -> None:
        i = k
        while time.perf_counter() < end:
            method, path, headers, body = mix[i % len(mix)]
            i += 1
            t0 = time.perf_counter()
            try:
                r = await c.request(method, path, headers=headers, content=body or None)
                key = str(r.status_code)
            except httpx.HTTPError as e:
                key = type(e).__name__
            lat.append(time.perf_counter() - t0)
            statuses[key] = statuses.get(key, 0) + 1

    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    t0 = time.perf_counter()
    async with httpx.AsyncClient(base_url=url, timeout=30, limits=limits) as c:
        await asyncio.gather(*(worker(k, c) for k in range(concurrency)))
    dt = time.perf_counter() - t0
    n = sum(statuses.values())
    return {"tool": "httpx", "requests": n, "errors": n - statuses.get("200", 0),
            "statuses": statuses, "p50_ms": round(_percentile(lat, 50) * 1e3, 2),
            "p99_ms": round(_percentile(lat, 99) * 1e3, 2),
            "max_ms": round(max(lat, default=0) * 1e3, 2), "rps": round(n / dt, 1)}


def run_python(url: str, seconds: float, concurrency: int) -> dict:
    """The asyncio client in its own process (so it does not share the test's GIL)."""
    out = subprocess.run([sys.executable, __file__, url, str(seconds), str(concurrency)],
                         capture_output=True, text=True, timeout=seconds + 120)
    if out.returncode != 0:
        raise RuntimeError(f"load client failed: {out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


_LUA = """
local reqs = {}
init = function(args)
  for i = 1, %(n)d do
    local f = io.open("%(dir)s/req" .. i .. ".lua.bin", "rb")
    local method = f:read("*l"); local path = f:read("*l"); local nh = tonumber(f:read("*l"))
    local headers = {}
    for _ = 1, nh do
      local k = f:read("*l"); local v = f:read("*l"); headers[k] = v
    end
    local body = f:read("*a"); f:close()
    if #body == 0 then body = nil end
    reqs[i] = wrk.format(method, path, headers, body)
  end
end
local k = 0
request = function()
  k = k + 1
  return reqs[(k %% #reqs) + 1]
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("RESULT %%d %%d %%d %%d %%d %%d %%d %%.1f %%.1f %%.1f\\n",
    summary.requests, e.connect, e.read, e.write, e.status, e.timeout, summary.duration,
    latency:percentile(50), latency:percentile(99), latency.max))
end
"""


def run_wrk(url: str, seconds: float, concurrency: int, threads: int = 2) -> dict:
    mix = requests_mix()
    with tempfile.TemporaryDirectory() as d:
        for i, (method, path, headers, body) in enumerate(mix, 1):
            head = [method, path, str(len(headers))]
            for k, v in headers.items():
                head += [k, v]
            Path(d, f"req{i}.lua.bin").write_bytes("\n".join(head).encode() + b"\n" + body)
        script = Path(d, "mix.lua")
        script.write_text(_LUA % {"n": len(mix), "dir": d})
        out = subprocess.run([WRK, "-t", str(threads), "-c", str(concurrency),
                              "-d", f"{int(seconds)}s", "--timeout", "30s", "-s", str(script),
                              url], capture_output=True, text=True, timeout=seconds + 120)
    m = re.search(r"^RESULT (.*)$", out.stdout, re.M)
    if out.returncode != 0 or m is None:
        raise RuntimeError(f"wrk failed: {out.stdout[-2000:]} {out.stderr[-2000:]}")
    req, conn, read, write, status, tmo, dur_us, p50, p99, mx = m.group(1).split()
    errors = sum(int(v) for v in (conn, read, write, status, tmo))
    return {"tool": "wrk", "requests": int(req), "errors": errors,
            "statuses": {"non-2xx": int(status), "connect": int(conn), "read": int(read),
                         "write": int(write), "timeout": int(tmo)},
            "p50_ms": round(float(p50) / 1e3, 2), "p99_ms": round(float(p99) / 1e3, 2),
            "max_ms": round(float(mx) / 1e3, 2), "rps": round(int(req) / (int(dur_us) / 1e6), 1)}


def run(url: str, seconds: float, concurrency: int, prefer_wrk: bool = True) -> dict:
    if prefer_wrk and WRK:
        return run_wrk(url, seconds, concurrency)
    return run_python(url, seconds, concurrency)


if __name__ == "__main__":
    u, s, c = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
    print(json.dumps(asyncio.run(_client(u, s, c))))
