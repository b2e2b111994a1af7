"""Export every model-zoo network from REAL MXNet 1.9.1 with random weights (run in its venv).

    .mxnet-venvs/mxnet-1.9.1/bin/python tests/interop/export_zoo_mx.py [OUTDIR] [--models ...]

OUTDIR defaults to artifacts/interop/zoo-1.9.1/. Per model NAME (file stem with '.' → '_'):
NAME-symbol.json + NAME-0000.params (HybridBlock.export) and NAME-io.npz (`data`: the input,
`output`: MXNet's output). Weights: mx.init.Xavier(), then running_mean ~ N(0,0.1),
running_var ~ U(0.5,1.5), gamma ~ U(0.5,1.5), beta ~ N(0,0.1) (and biases ~ N(0,0.1)); input
N(0,1) of shape (1, 3, 224, 224), (1, 3, 299, 299) for Inception v3. Existing exports are kept
unless --force.
"""
import argparse
import os
import sys
import time
import warnings

warnings.simplefilter("ignore")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as onp  # noqa: E402
import mxnet as mx  # noqa: E402
from mxnet.gluon.model_zoo import vision  # noqa: E402

from zoo_common import ARTIFACTS, ZOO_MODELS, draw, file_stem, input_size, rand_kind, seed_of  # noqa: E402


def export(name: str, outdir: str) -> None:
    seed = seed_of(name)
    mx.random.seed(seed)
    rs = onp.random.RandomState(seed)
    s = input_size(name)
    x = rs.standard_normal((1, 3, s, s)).astype(onp.float32)
    net = vision.get_model(name)
    net.initialize(mx.init.Xavier())
    net(mx.nd.array(x))                                   # finish deferred init
    for pname, p in sorted(net._collect_params_with_prefix().items()):
        kind = rand_kind(pname)
        if kind is not None:
            p.set_data(mx.nd.array(draw(rs, kind, p.shape).astype(onp.float32)))
    net.hybridize()
    y = net(mx.nd.array(x)).asnumpy()
    prefix = os.path.join(outdir, file_stem(name))
    net.export(prefix, epoch=0)
    onp.savez(prefix + "-io.npz", data=x, output=y)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("outdir", nargs="?", default=os.path.join(ARTIFACTS, "zoo-1.9.1"))
    ap.add_argument("--models", nargs="*")
    ap.add_argument("--force", action="store_true")
    args = ap.parse_args()
    os.makedirs(args.outdir, exist_ok=True)
    for name in args.models or ZOO_MODELS:
        stem = os.path.join(args.outdir, file_stem(name))
        if not args.force and all(os.path.exists(stem + s) for s in
                                  ("-symbol.json", "-0000.params", "-io.npz")):
            print(f"skip {name} (exists)", flush=True)
            continue
        t = time.time()
        export(name, args.outdir)
        print(f"exported {name} in {time.time() - t:.1f}s", flush=True)


if __name__ == "__main__":
    main()
