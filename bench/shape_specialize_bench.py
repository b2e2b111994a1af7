#!/usr/bin/env python
"""Shape specialization (issue 31), single-threaded CPU time per forward (load-robust):

1. A model served without a config (`[-1, 3, -1, -1]`) against the same model with a config
   fixing `[-1, 3, 224, 224]`, both through `Runner.load` + `Runner.run` (the server's path),
   ONNX Runtime sessions with 1 intra-op thread. Before issue 31 the config-less model ran
   every 224×224 request on the traced NumPy graph.
   Both measured alternately, minimum over 5 rounds.
2. The batch policy: a session specialized on every dim but the batch (what the engine
   builds: one session serves every batch size dynamic batching forms) against one fixed
   to each batch size too (a session per batch size), at batch 1, 4 and 8.
3. What one specialization costs: build seconds and resident memory (RSS growth).

    python bench/shape_specialize_bench.py [--models resnet18_v1 mobilenetv2_1.0] [--calls 10]

Models come from the framework's model zoo with random weights (the timing does not depend on
the values). The machine may be shared: compare ratios from one run, not absolute figures.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

from common import per_call_us, sys_path_root

sys_path_root()


def cpu_ms(fn, calls: int, repeats: int = 3) -> float:
    return per_call_us(fn, calls, repeats, warmup=1, clock=time.process_time)["median_us"] / 1e3


def paired_ms(a, b, calls: int, rounds: int = 5) -> tuple[float, float]:
    """Minimum CPU ms per call of `a` and of `b`, measured alternately (load hits both)."""
    ta, tb = [], []
    for _ in range(rounds):
        ta.append(cpu_ms(a, calls, 1))
        tb.append(cpu_ms(b, calls, 1))
    return round(min(ta), 2), round(min(tb), 2)


def export(name: str, d: Path) -> Path:
    import framework as mx
    from framework.gluon.model_zoo import vision
    net = vision.get_model(name)
    net.initialize(mx.init.Xavier())
    net.hybridize(backend="numpy")
    net(mx.np.zeros((1, 3, 224, 224)))
    prefix = d / name
    net.export(str(prefix))
    return prefix


def served(prefix: Path, calls: int) -> dict:
    from service.repository.config import ModelConfig, TensorSpec
    from service.repository.store import ModelFiles
    from service.runtime.compiled import OrtOptions
    from service.runtime.runner import Runner
    files = ModelFiles(Path(f"{prefix}-symbol.json"), Path(f"{prefix}-0000.params"))
    x = np.random.rand(1, 3, 224, 224).astype(np.float32)
    out, runners = {}, {}
    cfg = ModelConfig(inputs=[TensorSpec(name="data", shape=[-1, 3, 224, 224])])
    for label, config in (("config", cfg), ("no_config", None)):
        r = Runner.load(prefix.name, "1", files, config, ort=OrtOptions(intra_op_threads=1))
        assert r.engine.name == "onnxruntime", r.engine
        t0 = time.perf_counter()
        r.run([x])                         # the config-less model specializes here
        out[f"{label}_first_s"] = round(time.perf_counter() - t0, 3)
        if label == "no_config":
            out["no_config_specialized_mb"] = round(r.specialized_bytes() / 2 ** 20, 1)
        runners[label] = r
    out["config_ms"], out["no_config_ms"] = paired_ms(
        lambda: runners["config"].run([x]), lambda: runners["no_config"].run([x]), calls)
    out["ratio"] = round(out["no_config_ms"] / out["config_ms"], 3)
    return out


def batch_policy(prefix: Path, calls: int) -> dict:
    import framework as mx
    from framework.gluon import SymbolBlock
    from framework.onnx.build import lower_symbol
    from framework.onnx.runtime import SessionConfig, make_session
    blk = SymbolBlock.imports(f"{prefix}-symbol.json", ["data"], f"{prefix}-0000.params")
    blk.hybridize(backend="numpy")
    blk(mx.np.zeros((1, 3, 224, 224)))
    sym = blk._cached_graph[1]
    params = {p.var_name(): p.data().asnumpy() for p in blk.collect_params().values()}
    config = SessionConfig(intra_op_threads=1, spinning=False)
    out = {}

    def session(shape, dynamic):
        model = lower_symbol(sym, params, {"data": shape}, dynamic_batch=dynamic)
        return make_session(model, config)
    t0 = time.perf_counter()
    free = session((1, 3, 224, 224), True)
    out["build_s"] = round(time.perf_counter() - t0, 2)
    name = free.get_inputs()[0].name
    for b in (1, 4, 8):
        x = np.random.rand(b, 3, 224, 224).astype(np.float32)
        fixed = session(x.shape, False)
        out[f"b{b}_batch_free_ms"], out[f"b{b}_fixed_ms"] = paired_ms(
            lambda: free.run(None, {name: x}), lambda: fixed.run(None, {name: x}),
            max(1, calls // b))
        del fixed
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", nargs="+", default=["resnet18_v1", "mobilenetv2_1.0"])
    ap.add_argument("--calls", type=int, default=10)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    with tempfile.TemporaryDirectory(prefix="hs-spec-") as d:
        for name in args.models:
            prefix = export(name, Path(d))
            print(name, "served:", served(prefix, args.calls), flush=True)
            print(name, "batch policy:", batch_policy(prefix, args.calls), flush=True)


if __name__ == "__main__":
    sys.exit(main())
