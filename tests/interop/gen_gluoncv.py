"""Record GluonCV fixtures with real GluonCV 0.10.5 / MXNet 1.9.1 (run in that venv).

For each model of gluoncv_recipe.MODELS: build it from GluonCV's model zoo (no pretrained
weights), set every parameter from the recipe, hybridize, run the recipe's input, export, and
write into tests/fixtures/gluoncv/: `<name>-symbol.json`, `<name>-manifest.json` (parameter
names, shapes, arg/aux, input shape) and `<name>-io.npz.xz` (an LZMA-packed npz of the outputs
and the model's constants such as anchors). Weights and input are not written: the tests
regenerate them from the recipe.

    python tests/interop/gen_gluoncv.py [names...]
"""
from __future__ import annotations

import io
import json
import lzma
import os
import subprocess
import sys
import tempfile
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))   # tests/: the shared recipe
warnings.simplefilter("ignore")

import mxnet as mx  # noqa: E402
import numpy as np  # noqa: E402
from gluoncv import model_zoo  # noqa: E402

from gluoncv_recipe import MODELS, is_learned, make_input, make_param  # noqa: E402

OUT = os.path.join(HERE, "..", "fixtures", "gluoncv")


def build(name: str, spec: dict):
    kw = dict(pretrained=False, **spec.get("kwargs", {}))
    try:
        net = model_zoo.get_model(name, pretrained_base=False, **kw)
    except TypeError:
        net = model_zoo.get_model(name, **kw)
    for path, value in spec.get("set", {}).items():
        *owners, attr = path.split(".")
        obj = net
        for o in owners:
            obj = getattr(obj, o)
        setattr(obj, attr, value)
    net.initialize()
    net.hybridize()
    x = mx.nd.array(make_input(spec["shape"]))
    net(x)   # materialise deferred shapes before the parameters are set
    return net, x


def _run_zeroing_unwritten_rois(net, x):
    """The net's outputs with MXNet's GPU ROIAlign semantics for rois whose batch index is
    negative: zeros. MXNet 1.9.1's CPU kernel (roi_align.cc) writes `top_data[n]` for such a roi
    n, i.e. zeroes one stray element of roi 0's block, and leaves the roi's own block as the
    allocator left it; FPN R-CNNs mask the rois of the other pyramid levels with -1 and sum the
    levels, so on CPU they read uninitialised memory. The exported symbol is unchanged: this
    reference run only pools every roi from image 0 and zeroes the masked ones afterwards."""
    plain = mx.sym.contrib.ROIAlign

    def masked(data, rois, *args, **kwargs):
        index = mx.sym.slice_axis(rois, axis=1, begin=0, end=1)
        safe = mx.sym.concat(mx.sym.relu(index), mx.sym.slice_axis(rois, axis=1, begin=1, end=5),
                             dim=1)
        out = plain(data, safe, *args, **kwargs)
        live = mx.sym.broadcast_like(mx.sym.reshape(index >= 0, shape=(-1, 1, 1, 1)), out)
        return mx.sym.where(live, out, mx.sym.zeros_like(out))

    mx.sym.contrib.ROIAlign = masked
    try:
        net.hybridize()            # re-trace with the masked operator
        return net(x)
    finally:
        mx.sym.contrib.ROIAlign = plain


def record(name: str) -> None:
    spec = MODELS[name]
    net, x = build(name, spec)
    with tempfile.TemporaryDirectory() as tmp:
        prefix = os.path.join(tmp, "m")
        net.export(prefix)
        sym = mx.sym.load(prefix + "-symbol.json")
        args = set(sym.list_arguments())
        params = []
        consts = {}
        for p in net.collect_params().values():
            if is_learned(p.name):
                p.set_data(mx.nd.array(make_param(p.name, p.shape, spec["heads"])))
            else:
                consts[p.name] = p.data().asnumpy()
        net.export(prefix)
        saved = mx.nd.load(prefix + "-0000.params")
        for key, arr in sorted(saved.items()):
            kind, pname = key.split(":", 1)
            params.append([pname, kind, list(arr.shape)])
        with open(prefix + "-symbol.json") as f:
            symbol = f.read()
        if spec.get("zero_unwritten_rois"):
            outs = _run_zeroing_unwritten_rois(net, x)
        else:
            # Run the exported files, the way a user of the export would.
            blk = mx.gluon.SymbolBlock.imports(prefix + "-symbol.json", ["data"],
                                               prefix + "-0000.params")
            outs = blk(x)
    outs = outs if isinstance(outs, (list, tuple)) else [outs]
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, f"{name}-symbol.json"), "w") as f:
        f.write(symbol)
    with open(os.path.join(OUT, f"{name}-manifest.json"), "w") as f:
        json.dump({"model": name, "input_shape": list(spec["shape"]), "params": params,
                   "arguments": sorted(args - {"data"})}, f, indent=0)
    # the input is not stored (make_input regenerates it); LZMA packs anchor grids ~40x
    # tighter than the zip deflate of savez_compressed
    buf = io.BytesIO()
    np.savez(buf, **{f"out{i}": o.asnumpy() for i, o in enumerate(outs)},
             **{f"const:{k}": v for k, v in consts.items()})
    with open(os.path.join(OUT, f"{name}-io.npz.xz"), "wb") as f:
        f.write(lzma.compress(buf.getvalue(), preset=9))
    print(name, [o.shape for o in outs], flush=True)


def main() -> None:
    names = sys.argv[1:] or list(MODELS)
    if len(names) == 1:
        record(names[0])
        return
    # one process per model: Gluon's name counters (ssd0_, ssd1_…) then never depend on order
    failed = [n for n in names
              if subprocess.run([sys.executable, os.path.abspath(__file__), n]).returncode]
    if failed:
        print("FAILED:", " ".join(failed), flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
