#!/usr/bin/env python
"""MXNet 1.9.1 side of bench/server/run.py (run it with the MXNet venv's python).

Exports, in MXNet 1.x format, the two models both servers load from the SAME files:

* ``mlp``: the demo MLP (512-256-128-2, ReLU) with the demo model's own weights, read from
  ``--mlp-weights`` (an .npz with w0,b0,w1,b1,w2,b2 that run.py dumps from
  ``model_store/mlp/1/mlp-0000.params``; the demo export itself is in the 2.x format that
  MXNet 1.9.1 cannot read, so real MXNet re-exports the same network).
* ``resnet18_v1``: ``mxnet.gluon.model_zoo.vision.resnet18_v1(pretrained=False)``, seeded Xavier
  init, BatchNorm statistics randomised (so outputs are not degenerate), hybridized.
* ``mobilenetv2_1.0``: ``vision.mobilenet_v2_1_0(pretrained=False)``, initialised the same way.

For each: ``OUTDIR/<name>/<name>-symbol.json`` + ``-0000.params`` and ``OUTDIR/<name>-io.npz``
holding the benchmark input (``data``) and MXNet's output for it (``output``), which run.py
checks every server's HTTP answer against.  Prints one JSON line describing what it wrote.

    .mxnet-venvs/mxnet-1.9.1/bin/python bench/server/mx_export.py OUTDIR --mlp-weights W.npz
"""
import argparse
import json
import os
import warnings

import numpy as onp


def export(net, x, outdir, name):
    import mxnet as mx
    net.hybridize(static_alloc=True, static_shape=True)
    y = net(mx.nd.array(x))
    y.wait_to_read()
    d = os.path.join(outdir, name)
    os.makedirs(d, exist_ok=True)
    net.export(os.path.join(d, name), epoch=0)
    onp.savez(os.path.join(outdir, name + "-io.npz"), data=x, output=y.asnumpy())
    return {"dir": d, "input_shape": list(x.shape), "output_shape": list(y.shape)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("outdir")
    ap.add_argument("--mlp-weights", required=True)
    ap.add_argument("--seed", type=int, default=20240501)
    ap.add_argument("--only", choices=["mlp"], help="export only the MLP")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    import mxnet as mx
    from mxnet.gluon import nn
    from mxnet.gluon.model_zoo import vision

    os.makedirs(args.outdir, exist_ok=True)
    rs = onp.random.RandomState(args.seed)
    report = {"mxnet_version": mx.__version__}

    w = onp.load(args.mlp_weights)
    mlp = nn.HybridSequential()
    mlp.add(nn.Dense(256, activation="relu", in_units=512),
            nn.Dense(128, activation="relu", in_units=256),
            nn.Dense(2, in_units=128))
    mlp.initialize()
    dense = [b for b in mlp]
    for k, layer in enumerate(dense):
        layer.weight.set_data(mx.nd.array(w[f"w{k}"]))
        layer.bias.set_data(mx.nd.array(w[f"b{k}"]))
    report["mlp"] = export(mlp, rs.standard_normal((1, 512)).astype("float32"),
                          args.outdir, "mlp")
    if args.only == "mlp":
        print(json.dumps(report))
        return

    mx.random.seed(args.seed)
    for name, make in (("resnet18_v1", vision.resnet18_v1),
                       ("mobilenetv2_1.0", vision.mobilenet_v2_1_0)):
        net = make(pretrained=False)
        net.initialize(mx.init.Xavier())
        x = rs.standard_normal((1, 3, 224, 224)).astype("float32")
        net(mx.nd.array(x))
        for k, p in net.collect_params().items():
            if k.endswith("running_mean"):
                p.set_data(mx.nd.array(rs.normal(0, 0.1, p.shape)))
            elif k.endswith("running_var") or k.endswith("gamma"):
                p.set_data(mx.nd.array(rs.uniform(0.5, 1.5, p.shape)))
            elif k.endswith("beta") or k.endswith("bias"):
                p.set_data(mx.nd.array(rs.normal(0, 0.1, p.shape)))
        report[name] = export(net, x, args.outdir, name)
    print(json.dumps(report))


if __name__ == "__main__":
    main()
