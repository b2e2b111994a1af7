#!/usr/bin/env python
"""Server load of one model: `Runner.load` time (parse, build, lower, sessions, verify, warm)
and the resident memory the loaded model adds, per engine, each repeat in a fresh process.

    python bench/server/load_bench.py [--model resnet50_v1] [--repeats 3] [--prefix PREFIX]

Without --prefix the model is built by the framework's model zoo (seeded init) and exported in
MXNet 1.x format to a temp dir; the server path is the same as for MXNet's own export. Memory
is VmRSS after the load minus before it (framework and onnxruntime already imported, as in a
running server), against the parameters' bytes. Prints one JSON line per engine with medians.
(bench/ort_load_bench.py times the stages of the same load on an MXNet export and reports the
memory the server's load accounting holds.)
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT)]
from service.runtime.memory import rss_bytes as rss  # noqa: E402 - root put on the path


def export(model: str, outdir: str) -> str:
    import numpy as np
    import framework as mx
    from framework.gluon.model_zoo.vision import get_model
    np.random.seed(0)
    net = get_model(model)
    net.initialize(mx.initializer.Xavier())
    net.hybridize()
    net(mx.np.array(np.random.rand(1, 3, 224, 224).astype("float32")))
    prefix = os.path.join(outdir, model)
    net.export(prefix, format="1.x")
    return prefix


def probe(prefix: str, engine: str, threads: int) -> dict:
    import warnings
    warnings.simplefilter("ignore")
    import numpy as np
    import onnxruntime  # noqa: F401 - a server has it imported before any load
    from service.repository.config import ModelConfig, TensorSpec
    from service.repository.store import ModelFiles
    from service.runtime.compiled import OrtOptions
    from service.runtime.runner import Runner
    cfg = ModelConfig(inputs=[TensorSpec(name="data", shape=[-1, 3, 224, 224])], max_batch_size=8)
    files = ModelFiles(Path(prefix + "-symbol.json"), Path(prefix + "-0000.params"))
    stages: list = []
    before, t0, c0 = rss(), time.perf_counter(), time.process_time()
    r = Runner.load("m", "1", files, cfg, engine=engine, ort=OrtOptions(None, threads),
                    buffer_sets=threads,
                    progress=lambda msg: stages.append((msg, time.perf_counter() - t0)))
    added = rss() - before
    params = sum(np.asarray(p.data()).nbytes for p in r.block.collect_params().values())
    ends = [t for _, t in stages[1:]] + [r.load_seconds]
    return {"engine": r.engine.name, "load_s": r.load_seconds, "rss_added": added,
            "param_bytes": params, "cpu_s": time.process_time() - c0,
            "stages": {m.split(" (")[0]: round(e - t, 3) for (m, t), e in zip(stages, ends)}}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="resnet50_v1")
    ap.add_argument("--prefix", default=None, help="an MXNet export (PREFIX-symbol.json …)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2, help="inference threads (cores)")
    ap.add_argument("--engines", default="onnxruntime,numpy")
    ap.add_argument("--probe", nargs=2, metavar=("PREFIX", "ENGINE"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.probe:
        print(json.dumps(probe(args.probe[0], args.probe[1], args.threads)))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        prefix = args.prefix or export(args.model, tmp)
        for engine in args.engines.split(","):
            runs = []
            for _ in range(args.repeats):
                out = subprocess.run([sys.executable, __file__, "--probe", prefix, engine,
                                      "--threads", str(args.threads)], capture_output=True,
                                     text=True, check=True, timeout=600)
                runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
            med = {k: statistics.median(r[k] for r in runs) for k in ("load_s", "rss_added",
                                                                       "cpu_s")}
            p = runs[0]["param_bytes"]
            print(json.dumps({"model": args.model, "engine_asked": engine,
                              "engine": runs[0]["engine"], "load_s": round(med["load_s"], 3),
                              "load_runs": [round(r["load_s"], 3) for r in runs],
                              "load_cpu_s": round(med["cpu_s"], 3),
                              "stages_first_run": runs[0]["stages"],
                              "rss_added_mb": round(med["rss_added"] / 2**20, 1),
                              "param_mb": round(p / 2**20, 1),
                              "rss_over_params": round(med["rss_added"] / p, 2),
                              "uptime": open("/proc/loadavg").read().split()[:3]}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
