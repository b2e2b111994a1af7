"""Models built, hybridized and exported (2.x format) by hybridserve load in REAL MXNet 2.0.0b1
(`gluon.SymbolBlock.imports`) and give the same outputs — the issue-2 interop requirement.

    python tests/interop/check_export_2x.py

Exports go to artifacts/interop/export-2x/. Exit status 1 on any mismatch.
"""
from __future__ import annotations

import os
import sys
import warnings

import numpy as onp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from interop_util import compare, print_table, randomize, run_mx  # noqa: E402
from zoo_common import ARTIFACTS, seed_of  # noqa: E402

import framework as mx  # noqa: E402
from framework import np, npx  # noqa: E402
from framework.gluon import HybridBlock, nn, rnn  # noqa: E402
from framework.gluon.model_zoo import vision  # noqa: E402

OUT = os.path.join(ARTIFACTS, "export-2x")


class MLP(HybridBlock):
    """The seed tutorial's MLP_Hybrid."""

    def __init__(self):
        super().__init__()
        self.dense1 = nn.Dense(256, activation="relu")
        self.dense2 = nn.Dense(128, activation="relu")
        self.dense3 = nn.Dense(2)

    def forward(self, x):
        return self.dense3(self.dense2(self.dense1(x)))


class ConvMix(HybridBlock):
    """Conv/BN/pool plus this issue's layers: PReLU, GELU, ELU, Swish, LayerNorm, InstanceNorm,
    GroupNorm, HybridConcatenate, and some np/npx ops."""

    def __init__(self):
        super().__init__()
        self.stem = nn.HybridSequential()
        self.stem.add(nn.Conv2D(8, 3, padding=1), nn.BatchNorm(), nn.PReLU(in_channels=8))
        self.branches = nn.HybridConcatenate(axis=1)
        self.branches.add(nn.Identity(), nn.Conv2D(4, 1), nn.Conv2D(4, 3, padding=1, groups=4))
        self.inorm = nn.InstanceNorm(scale=True)
        self.gnorm = nn.GroupNorm(num_groups=4)
        self.pool = nn.MaxPool2D(2)
        self.lnorm = nn.LayerNorm()
        self.acts = [nn.GELU(), nn.ELU(0.5), nn.Swish(1.5), nn.LeakyReLU(0.2), nn.SELU()]
        for i, a in enumerate(self.acts):
            self.register_child(a, f"act{i}")
        self.out = nn.Dense(5)

    def forward(self, x):
        y = self.branches(self.stem(x))
        y = self.pool(self.gnorm(self.inorm(y)))
        y = np.transpose(y, (0, 2, 3, 1))
        y = self.lnorm(y)
        for a in self.acts:
            y = a(y)
        y = npx.reshape(y, (-2, -1)) * 0.5 + np.mean(y)
        return self.out(y), npx.softmax(y, axis=-1)


class SeqModel(HybridBlock):
    """Embedding → 2-layer LSTM (NTC) → Dense, and a bidirectional GRU on the same sequence."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(20, 6)
        self.lstm = rnn.LSTM(8, num_layers=2, layout="NTC")
        self.gru = rnn.GRU(5, layout="NTC", bidirectional=True)
        self.rnn = rnn.RNN(4, activation="tanh")
        self.out = nn.Dense(3, flatten=False)

    def forward(self, idx):
        e = self.emb(idx)
        return self.out(self.lstm(e)), self.gru(e), self.rnn(np.swapaxes(e, 0, 1))


def _models():
    return [
        ("mlp_hybrid", MLP, [(1, 512)], "normal"),
        ("conv_mix", ConvMix, [(2, 3, 12, 12)], "normal"),
        ("seq_model", SeqModel, [(2, 7)], "int:20"),
        ("resnet18_v1", lambda: vision.resnet18_v1(classes=10, thumbnail=True), [(2, 3, 32, 32)],
         "normal"),
        ("mobilenet_v2_0_25", lambda: vision.mobilenet_v2_0_25(classes=10), [(1, 3, 64, 64)],
         "normal"),
        ("densenet_tiny", lambda: vision.DenseNet(8, 4, [2, 2], bn_size=2, classes=10),
         [(1, 3, 224, 224)], "normal"),
    ]


def build(name, ctor, shapes, kind):
    rs = onp.random.RandomState(seed_of(name))
    if kind == "normal":
        xs = [rs.standard_normal(s).astype(onp.float32) for s in shapes]
    else:
        xs = [rs.randint(0, int(kind[4:]), s).astype(onp.float32) for s in shapes]
    net = ctor()
    net.initialize(mx.init.Xavier())
    net(*[mx.np.array(x) for x in xs])
    randomize(net, rs)
    net.hybridize()
    outs = net(*[mx.np.array(x) for x in xs])
    outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
    prefix = os.path.join(OUT, name)
    net.export(prefix)
    names = ["data"] if len(xs) == 1 else [f"data{i}" for i in range(len(xs))]
    onp.savez(prefix + "-in.npz", **dict(zip(names, xs)))
    job = {"name": name, "symbol": prefix + "-symbol.json", "params": prefix + "-0000.params",
           "inputs": prefix + "-in.npz", "out": prefix + "-mx.npz"}
    return job, [o.asnumpy() for o in outs]


def main() -> int:
    warnings.simplefilter("ignore")
    os.makedirs(OUT, exist_ok=True)
    jobs, ours = [], {}
    for name, ctor, shapes, kind in _models():
        job, outs = build(name, ctor, shapes, kind)
        jobs.append(job)
        ours[name] = outs
    summary = run_mx("2.0.0b1", jobs)
    rows, bad = [], 0
    for job in jobs:
        name, res = job["name"], summary.get(job["name"], {})
        if not res.get("ok"):
            rows.append([name, "LOAD/RUN FAILED", "", res.get("error", "")[:120]])
            bad += 1
            continue
        mxo = onp.load(job["out"])
        refs = [mxo[k] for k in sorted(mxo.files, key=lambda k: int(k[6:] or 0))]
        results = [compare(o, r) for o, r in zip(ours[name], refs)]
        ok = len(refs) == len(ours[name]) and all(r[0] for r in results)
        rows.append([name, "ok" if ok else "MISMATCH",
                     f"{max(r[1] for r in results):.2e}", f"{len(refs)} output(s)"])
        bad += not ok
    print_table(rows, ["hybridserve 2.x export", "in MXNet 2.0.0b1", "max|Δ|", "outputs"])
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
