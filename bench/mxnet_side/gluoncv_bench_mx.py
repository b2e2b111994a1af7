"""Real MXNet side of bench/gluoncv_bench.py (MXNet 1.9.1 venv with GluonCV 0.10.5).

For each `name:HxW` (`name@defaults:HxW`: GluonCV's own NMS/proposal settings): on first
use, build the GluonCV model (pretrained=False, the recipe of
tests/gluoncv_recipe.py: its weights, head multipliers and settings) at that input size, export
it to OUTDIR/<name>-symbol.json/-0000.params and write OUTDIR/<name>-io.npz (data, outputs).
Then time the export as a user serves it: SymbolBlock.imports, hybridize(static_alloc,
static_shape), forwards each followed by wait_to_read.

    python gluoncv_bench_mx.py OUTDIR --models ssd_300_vgg16_atrous_voc:300x300,... \
        [--calls 3] [--repeats 3] [--clock wall|process]

Prints one JSON document: {name: {"per_call_ms": median, "min_ms": minimum}}.
"""
import argparse
import json
import os
import sys
import warnings

import numpy as onp

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path[:0] = [HERE, os.path.join(ROOT, "tests"), os.path.join(ROOT, "tests", "interop")]
from time_export_mx import time_forward, timing_args  # noqa: E402


def export(name: str, shape: tuple, prefix: str) -> None:
    """`name@defaults`: GluonCV's own settings (proposal and NMS counts) instead of the
    recipe's smaller ones; weights from the recipe either way."""
    import mxnet as mx
    from gen_gluoncv import build
    from gluoncv_recipe import MODELS, is_learned, make_param
    name, _, variant = name.partition("@")
    spec = dict(MODELS[name], shape=shape)
    if variant == "defaults":
        spec.pop("set", None)
    net, x = build(name, spec)
    for p in net.collect_params().values():
        if is_learned(p.name):
            p.set_data(mx.nd.array(make_param(p.name, p.shape, spec["heads"])))
    outs = net(x)
    outs = outs if isinstance(outs, (list, tuple)) else [outs]
    net.export(prefix)
    onp.savez(prefix + "-io.npz", data=x.asnumpy(),
              **{f"out{i}": o.asnumpy() for i, o in enumerate(outs)})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("outdir")
    ap.add_argument("--models", required=True)
    args, clock = timing_args(ap, 3, 3)
    warnings.simplefilter("ignore")
    import mxnet as mx
    report = {}
    for item in args.models.split(","):
        name, size = item.split(":")
        h, w = (int(v) for v in size.split("x"))
        prefix = os.path.join(args.outdir, name)
        if not os.path.exists(prefix + "-io.npz"):
            export(name, (1, 3, h, w), prefix)
        net = mx.gluon.SymbolBlock.imports(prefix + "-symbol.json", ["data"],
                                           prefix + "-0000.params")
        net.hybridize(static_alloc=True, static_shape=True)
        x = mx.nd.array(onp.load(prefix + "-io.npz")["data"])
        first = net(x)
        (first[0] if isinstance(first, (list, tuple)) else first).wait_to_read()
        report[name] = time_forward(lambda _x: _All(net(x)), None, args.calls,
                                    args.repeats, clock)
    json.dump(report, sys.stdout)
    print()


class _All:
    """time_forward waits on what the forward returns: here every output of the detector."""

    def __init__(self, outs):
        self.outs = outs if isinstance(outs, (list, tuple)) else [outs]

    def wait_to_read(self):
        for o in self.outs:
            o.wait_to_read()


if __name__ == "__main__":
    main()
