#!/usr/bin/env python
"""Loading a model from an s3:// store against the local-disk store, same run (issue 29).

The framework's model zoo builds ResNet-50 v1 (seeded init) and exports it in MXNet 1.x format
(as bench/server/load_bench.py does); the export is put in a local directory store and, through
a SeaweedFS S3 server started here (tests/s3server.py, signed credentials, loopback), in a
bucket. Each repeat, alternating, times what a server does to load version 1: `store.files`
(S3: a download into a fresh read cache — the cold case; then again from the warm cache)
followed by `Runner.load` with the server's limits and engine. Reports medians and the ratios
S3 cold / local and S3 warm / local.

    python bench/server/s3_load_bench.py [--model resnet50_v1] [--repeats 3] [--engine numpy]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(Path(__file__).parent)]
from load_bench import export  # noqa: E402 - the bench's own directory put on the path
from s3server import SeaweedS3  # noqa: E402


def timed_load(store, cfg, settings) -> tuple[float, float]:
    """(seconds to get the files, seconds for files + Runner.load)."""
    from service.runtime.registry import load_limits
    from service.runtime.runner import Runner
    t0 = time.perf_counter()
    files = store.files("m", "1")
    t1 = time.perf_counter()
    Runner.load("m", "1", files, cfg, **load_limits(settings))
    return t1 - t0, time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="resnet50_v1")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--engine", default="onnxruntime", choices=["onnxruntime", "numpy"])
    args = ap.parse_args()
    from service.repository.backend import open_store
    from service.repository.config import ModelConfig, TensorSpec
    from service.settings import Settings
    settings = Settings(engine=args.engine, inference_threads=2)
    cfg = ModelConfig(inputs=[TensorSpec(name="data", shape=[-1, 3, 224, 224])],
                      max_batch_size=8)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        prefix = Path(export(args.model, str(tmp)))
        vdir = tmp / "store" / "m" / "1"
        vdir.mkdir(parents=True)
        for suffix in ("-symbol.json", "-0000.params"):
            shutil.copy(f"{prefix}{suffix}", vdir / f"{args.model}{suffix}")
        s3 = SeaweedS3(tmp / "weed", tmp / "weed.log").start()
        try:
            os.environ.update(s3.env())
            s3.make_bucket("bench")
            for f in vdir.iterdir():
                s3.client().upload_file(str(f), "bench", f"models/m/1/{f.name}")
            local = open_store(tmp / "store")
            runs: dict[str, list] = {"local": [], "s3_cold": [], "s3_warm": []}
            for k in range(args.repeats):
                runs["local"].append(timed_load(local, cfg, settings))
                cache = tmp / f"cache{k}"
                remote = open_store("s3://bench/models", cache_dir=cache)
                runs["s3_cold"].append(timed_load(remote, cfg, settings))
                runs["s3_warm"].append(timed_load(remote, cfg, settings))
                assert remote.cache.downloads == 2          # the warm load downloaded nothing
        finally:
            s3.stop()
        med = {k: (statistics.median(f for f, _ in v), statistics.median(t for _, t in v))
               for k, v in runs.items()}
        print(json.dumps({
            "model": args.model, "engine": args.engine, "repeats": args.repeats,
            "param_mb": round(os.path.getsize(f"{prefix}-0000.params") / 2**20, 1),
            "files_s": {k: round(f, 3) for k, (f, _) in med.items()},
            "load_s": {k: round(t, 3) for k, (_, t) in med.items()},
            "s3_cold_over_local": round(med["s3_cold"][1] / med["local"][1], 3),
            "s3_warm_over_local": round(med["s3_warm"][1] / med["local"][1], 3),
            "loadavg": open("/proc/loadavg").read().split()[:3]}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
