#!/usr/bin/env python
"""The server's load of one MXNet export on the ONNX Runtime engine: time and memory by stage.

    python bench/ort_load_bench.py PREFIX [--repeats 3]

Each repeat runs in a fresh process (the framework, the service and onnxruntime already
imported, the default thread policy applied, as in a running server) and loads the export as
the server does (`Runner.load` with the settings' ONNX Runtime options): parse the graph, read
the parameters, build the block and run the NumPy reference forward on the check input, build
the ONNX Runtime twin (partition, lower, sessions) and check it reproduces the reference
(max|Δ| ≤ 1e-4·max(1, max|ref|)), warm. Stages are timed from the load's own progress
messages, wall and CPU seconds (all threads; on a loaded machine the steadier figure). Resident
memory is what the server's load accounting measures (service/runtime/memory.py `measured`:
RSS growth across the load, the heap trimmed before and after), against the parameters' bytes.
PREFIX names an export with `PREFIX-symbol.json` and `PREFIX-0000.params`.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from common import sys_path_root

sys_path_root()

STAGES = {"parsing graph": "parse graph", "reading parameters": "read parameters",
          "building the block": "block + NumPy reference forward",
          "optimising the graph": "ONNX Runtime twin: partition, lower, session, verify",
          "warming shape": "warm"}


def probe(prefix: str) -> dict:
    import warnings
    warnings.simplefilter("ignore")
    import onnxruntime  # noqa: F401 - imported before the baseline, as a server has it
    from service.repository.store import ModelFiles
    from service.runtime.memory import measured
    from service.runtime.runner import Runner
    from service.runtime.threads import apply, ort_options
    from service.settings import Settings
    apply(Settings())                # the server's thread policy: BLAS and ORT threads per forward
    files = ModelFiles(Path(prefix + "-symbol.json"), Path(prefix + "-0000.params"))
    marks: list[tuple[str, float, float]] = []

    def say(msg: str) -> None:
        label = next((v for k, v in STAGES.items() if msg.startswith(k)), msg)
        marks.append((label, time.perf_counter(), time.process_time()))
    t0, c0 = time.perf_counter(), time.process_time()
    runner, held = measured(lambda: Runner.load("m", "1", files, None, progress=say,
                                                ort=ort_options(Settings())))
    marks.append(("end", time.perf_counter(), time.process_time()))
    stages = {a[0]: (b[1] - a[1], b[2] - a[2]) for a, b in zip(marks, marks[1:])}
    stages["load (all)"] = (marks[-1][1] - t0, marks[-1][2] - c0)
    pb = sum(p.data().asnumpy().nbytes for p in runner.block.collect_params().values())
    return {"param_bytes": pb, "held": held, "engine": runner.engine.name, "stages": stages}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("prefix")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--probe", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.probe:
        print(json.dumps(probe(args.prefix)))
        return
    runs = []
    for _ in range(args.repeats):
        out = subprocess.run([sys.executable, __file__, args.prefix, "--probe"],
                             capture_output=True, text=True, check=True)
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    pb = runs[0]["param_bytes"]
    held = statistics.median(r["held"] for r in runs)
    print(f"params {pb / 2 ** 20:.1f} MB; engine {runs[0]['engine']}; median of {len(runs)} "
          f"fresh processes; held after load {held / 2 ** 20:.0f} MB = {held / pb:.2f}x "
          "the parameter bytes")
    print("| stage | wall s | CPU s (all threads) |")
    print("|---|---|---|")
    for stage in runs[0]["stages"]:
        sec, cpu = (statistics.median(r["stages"][stage][j] for r in runs) for j in range(2))
        print(f"| {stage} | {sec:.2f} | {cpu:.2f} |")


if __name__ == "__main__":
    main()
