"""Build the demo models with the framework and export them into a model store.

    python -m service.cli.demo [STORE]        # default: model_store

Creates `mlp` (512→256→128→2, the seeds' MLP; dynamic batching on) and `lenet` (a small CNN for
(N, 1, 28, 28) inputs), each initialised with a fixed seed, hybridized, run once and exported
with `HybridBlock.export` into `<STORE>/<name>/1/`, plus a `config.json`.
"""
from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import numpy as np

import framework as mx
from framework.gluon import nn

SEED = 20240501


def build_mlp():
    net = nn.HybridSequential()
    net.add(nn.Dense(256, activation="relu", in_units=512),
            nn.Dense(128, activation="relu", in_units=256),
            nn.Dense(2, in_units=128))
    return net, (1, 512)


def build_lenet():
    net = nn.HybridSequential()
    net.add(nn.Conv2D(6, kernel_size=5, padding=2, activation="relu", in_channels=1),
            nn.MaxPool2D(pool_size=2, strides=2),
            nn.Conv2D(16, kernel_size=5, activation="relu", in_channels=6),
            nn.MaxPool2D(pool_size=2, strides=2),
            nn.Flatten(),
            nn.Dense(120, activation="relu", in_units=400),
            nn.Dense(84, activation="relu", in_units=120),
            nn.Dense(10, in_units=84))
    return net, (1, 1, 28, 28)


CONFIGS = {
    "mlp": {
        "description": "MLP 512-256-128-2 (ReLU), built and exported by hybridserve",
        "inputs": [{"name": "data", "datatype": "FP32", "shape": [-1, 512]}],
        "outputs": [{"name": "output", "datatype": "FP32", "shape": [-1, 2]}],
        "max_batch_size": 64,
        "dynamic_batching": {"max_queue_delay_microseconds": 1000,
                             "preferred_batch_size": [8, 16, 32]},
    },
    "lenet": {
        "description": "LeNet-style CNN for 1x28x28 images (10 classes), built and exported "
                       "by hybridserve",
        "inputs": [{"name": "data", "datatype": "FP32", "shape": [-1, 1, 28, 28]}],
        "outputs": [{"name": "output", "datatype": "FP32", "shape": [-1, 10]}],
        "max_batch_size": 32,
    },
}


def export_model(name: str, builder, store: Path) -> Path:
    mx.random.seed(SEED)
    net, shape = builder()
    net.initialize(mx.init.Xavier())
    net.hybridize()
    x = mx.np.array(np.random.default_rng(SEED).standard_normal(shape).astype(np.float32))
    net(x)                                       # trace once, then export the graph
    vdir = store / name / "1"
    if vdir.exists():
        shutil.rmtree(vdir)
    vdir.mkdir(parents=True)
    net.export(str(vdir / name), epoch=0)
    (store / name / "config.json").write_text(json.dumps({"name": name, **CONFIGS[name]},
                                                          indent=2) + "\n")
    return vdir


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    store = Path(argv[0] if argv else "model_store")
    store.mkdir(parents=True, exist_ok=True)
    for name, builder in (("mlp", build_mlp), ("lenet", build_lenet)):
        vdir = export_model(name, builder, store)
        print(f"exported {name} → {vdir}: {sorted(p.name for p in vdir.iterdir())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
