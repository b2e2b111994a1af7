"""Record MXNet 1.9.1's INT8 quantization on small networks (run in the MXNet 1.9.1 venv) →
tests/fixtures/quantization/, read by tests/contrib/test_quantization*.py.

* `entropy.npz`: layer-output histograms as MXNet's entropy collector builds them (8001 bins,
  widened across batches) and the threshold/divergence `_get_optimal_threshold` picks for each;
* `<net>-symbol.json` / `-0000.params`: a float network exported by Gluon 1.9.1 (random weights),
  `<net>-calib.npz`: its calibration inputs, and for each case `<net>-<case>-qsymbol.json`:
  the graph `quantize_net` returns (exported), plus its INT8 outputs on the inputs.

    python tests/interop/gen_quant_refs.py
"""
from __future__ import annotations

import json
import os
import tempfile
import warnings

warnings.simplefilter("ignore")
import mxnet as mx  # noqa: E402
import numpy as np  # noqa: E402
from mxnet.contrib import quantization as q  # noqa: E402
from mxnet.gluon import nn  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "quantization")


def entropy_cases(rng):
    """Each case: a list of batches (arrays) fed to the histogram collector one after another."""
    yield "normal", [rng.normal(0, 1, 3000).astype(np.float32)]
    yield "relu", [np.maximum(rng.normal(0.2, 1, 3000), 0).astype(np.float32)]
    yield "laplace_widening", [rng.laplace(0, 0.5, 2000).astype(np.float32),
                               rng.laplace(0, 1.5, 2000).astype(np.float32),
                               rng.laplace(0, 0.7, 2000).astype(np.float32)]
    yield "skewed", [np.concatenate([rng.normal(-0.5, 0.3, 2500), rng.exponential(2.0, 500)])
                     .astype(np.float32)]
    yield "relu_widening", [np.maximum(rng.normal(0, s, 2000), 0).astype(np.float32)
                            for s in (1.0, 2.5)]


def record_entropy(rng):
    out = {}
    for name, batches in entropy_cases(rng):
        # the collector's own steps (its `collect` takes an engine-owned handle): the first
        # batch's 8001-bin histogram, then MXNet's `combine_histogram` for each further batch
        for k, b in enumerate(batches):
            out[f"{name}/batch{k}"] = b
            mn, mx_ = np.min(b), np.max(b)
            th = max(abs(mn), abs(mx_))
            if k == 0:
                h, e = np.histogram(b, bins=8001, range=(-th, th))
                data = (h, e, mn, mx_, th)
            else:
                data = q.combine_histogram(data, b, mn, mx_, th)
        hist, edges, mn, mx_, th = data
        out[f"{name}/hist"], out[f"{name}/edges"] = hist.astype(np.int64), edges.astype(np.float32)
        out[f"{name}/range"] = np.array([mn, mx_, th], np.float32)
        for dtype in ("int8", "uint8", "auto"):
            _, _, t, d = q._get_optimal_threshold(data, dtype)
            out[f"{name}/{dtype}/threshold"] = np.float32(t)
            out[f"{name}/{dtype}/divergence"] = np.float32(d)
    np.savez_compressed(os.path.join(OUT, "entropy.npz"), **out)


class Res(nn.HybridBlock):
    """conv+bn+relu, a residual block (conv+bn+add+relu), global pooling, flatten, dense."""

    def __init__(self, **kw):
        super().__init__(**kw)
        with self.name_scope():
            self.c0, self.b0 = nn.Conv2D(8, 3, padding=1, in_channels=3), nn.BatchNorm(in_channels=8)
            self.a0 = nn.Activation("relu")
            self.c1, self.b1 = nn.Conv2D(8, 3, padding=1, in_channels=8), nn.BatchNorm(in_channels=8)
            self.a1 = nn.Activation("relu")
            self.c2, self.b2 = nn.Conv2D(8, 3, padding=1, in_channels=8), nn.BatchNorm(in_channels=8)
            self.a2 = nn.Activation("relu")
            self.pool, self.flat, self.fc = nn.GlobalAvgPool2D(), nn.Flatten(), nn.Dense(10, in_units=8)

    def hybrid_forward(self, F, x):
        y = self.a0(self.b0(self.c0(x)))
        z = self.b2(self.c2(self.a1(self.b1(self.c1(y)))))
        return self.fc(self.flat(self.pool(self.a2(z + y))))


class Branchy(nn.HybridBlock):
    """conv without BatchNorm, max pooling, two branches concatenated, dense+relu, dense."""

    def __init__(self, **kw):
        super().__init__(**kw)
        with self.name_scope():
            self.c0 = nn.Conv2D(6, 3, padding=1, in_channels=3, activation="relu")
            self.pool = nn.MaxPool2D(2)
            self.l, self.r = nn.Conv2D(4, 1, in_channels=6), nn.Conv2D(4, 3, padding=1, in_channels=6)
            self.fc1 = nn.Dense(16, activation="relu", in_units=8 * 8 * 8)
            self.fc2 = nn.Dense(5, in_units=16)

    def hybrid_forward(self, F, x):
        p = self.pool(self.c0(x))
        return self.fc2(self.fc1(F.concat(self.l(p), self.r(p), dim=1)))


def randomise(net, rng):
    for name, p in net.collect_params().items():
        shape = p.shape
        if name.endswith("running_var") or name.endswith("gamma"):
            v = rng.uniform(0.5, 1.5, shape)
        elif name.endswith("weight"):
            v = rng.normal(0, np.sqrt(2.0 / np.prod(shape[1:])), shape)
        else:
            v = rng.normal(0, 0.1, shape)
        p.set_data(mx.nd.array(v.astype(np.float32)))


CASES = {
    "res": [("naive", dict(calib_mode="naive")),
            ("entropy", dict(calib_mode="entropy")),
            ("none", dict(calib_mode="none")),
            ("int8", dict(calib_mode="naive", quantized_dtype="int8")),
            ("excl", dict(calib_mode="naive", exclude_layers=["res0_conv1_fwd"],
                          exclude_operators=["Pooling"]))],
    "branchy": [("naive", dict(calib_mode="naive")),
                ("smart", dict(calib_mode="naive", quantize_mode="smart")),
                ("entropy", dict(calib_mode="entropy")),
                ("match", dict(calib_mode="naive", exclude_layers_match=["dense1"]))],
}


def record_net(name, net, shape, rng):
    net.initialize()
    x = rng.uniform(-1, 1, (32,) + shape).astype(np.float32)
    test = rng.uniform(-1, 1, (8,) + shape).astype(np.float32)
    net(mx.nd.array(x[:1]))
    randomise(net, rng)
    net.hybridize()
    net(mx.nd.array(x[:1]))
    net.export(os.path.join(OUT, name))
    np.savez_compressed(os.path.join(OUT, f"{name}-calib.npz"), calib=x, test=test,
                        float_out=net(mx.nd.array(test)).asnumpy())
    outs = {}
    for case, kw in CASES[name]:
        data = mx.gluon.data.DataLoader(
            mx.gluon.data.ArrayDataset(mx.nd.array(x), mx.nd.zeros((32,))), batch_size=8)
        kw = {k: (list(v) if isinstance(v, list) else v) for k, v in kw.items()}
        if kw["calib_mode"] == "none":
            kw["data_shapes"] = [mx.io.DataDesc("data", (8,) + shape)]
        else:
            kw.update(calib_data=data, num_calib_examples=32)
        qnet = q.quantize_net(net, **kw)
        qnet.hybridize()
        outs[case] = qnet(mx.nd.array(test)).asnumpy()
        with tempfile.TemporaryDirectory() as d:
            qnet.export(os.path.join(d, "q"))
            with open(os.path.join(d, "q-symbol.json")) as f:
                sym = json.load(f)
        with open(os.path.join(OUT, f"{name}-{case}-qsymbol.json"), "w") as f:
            json.dump(sym, f, indent=1)
    np.savez_compressed(os.path.join(OUT, f"{name}-qout.npz"), **outs)


def main():
    os.makedirs(OUT, exist_ok=True)
    mx.random.seed(0)
    rng = np.random.default_rng(19)
    record_entropy(rng)
    record_net("res", Res(prefix="res0_"), (3, 16, 16), rng)
    record_net("branchy", Branchy(prefix="branchy0_"), (3, 16, 16), rng)


if __name__ == "__main__":
    main()
