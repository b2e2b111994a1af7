"""Build the demo models with the framework and export them into a model store.

    python -m service.cli.demo [STORE]        # default: model_store

Creates `mlp` (512→256→128→2, the seeds' MLP; dynamic batching on), `lenet` (a small CNN for
(N, 1, 28, 28) inputs), each initialised with a fixed seed, and `colors`, an image classifier
whose weights are set by hand: it names the dominant colour of a photo (JPEG/PNG/WebP/BMP in,
top classes with labels out: the config's `preprocess` and `label_filename`). Each is
hybridized, run once and exported with `HybridBlock.export` into `<STORE>/<name>/1/`, plus a
`config.json` (and `colors`' labels.txt).
"""
from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import numpy as np

import framework as mx
from framework.gluon import nn
from framework.ops.registry import get_op

SEED = 20240501


def build_mlp():
    net = nn.HybridSequential()
    net.add(nn.Dense(256, activation="relu", in_units=512),
            nn.Dense(128, activation="relu", in_units=256),
            nn.Dense(2, in_units=128))
    net.initialize(mx.init.Xavier())
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
    net.initialize(mx.init.Xavier())
    return net, (1, 1, 28, 28)


# colour name → its RGB prototype (0..255); the classifier scores a picture's mean colour by its
# closeness to each prototype
COLORS = {"red": (200, 30, 30), "orange": (235, 140, 30), "yellow": (235, 215, 40),
          "green": (40, 160, 50), "cyan": (40, 200, 210), "blue": (30, 60, 200),
          "purple": (120, 50, 170), "pink": (235, 120, 180), "brown": (120, 75, 40),
          "white": (240, 240, 240), "grey": (128, 128, 128), "black": (15, 15, 15)}
COLOR_SHARPNESS = 8.0


def build_colors():
    """Mean colour (global average pool of the normalised image) → softmax over the negated
    squared distance to each prototype: logits 2·p·m − |p|² (|m|² is common to all)."""
    protos = (np.array(list(COLORS.values()), np.float32) / 255.0 - 0.5) / 0.5
    net = nn.HybridSequential()
    net.add(nn.GlobalAvgPool2D(), nn.Flatten(), nn.Dense(len(COLORS), in_units=3),
            nn.HybridLambda("softmax"))
    net.initialize()
    net[2].weight.set_data(mx.np.array(2 * COLOR_SHARPNESS * protos))
    net[2].bias.set_data(mx.np.array(-COLOR_SHARPNESS * (protos ** 2).sum(axis=1)))
    return net, (1, 3, 64, 64)


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
    "colors": {
        "description": "names the dominant colour of an image (12 classes; weights set by "
                       "hand), built and exported by hybridserve: send a JPEG/PNG/WebP/BMP",
        "inputs": [{"name": "data", "datatype": "FP32", "shape": [-1, 3, 64, 64],
                    "preprocess": {"type": "image", "color": "RGB", "resize": "shorter",
                                   "shorter_side": 72, "size": [64, 64], "scale": 1 / 255,
                                   "mean": [0.5, 0.5, 0.5], "std": [0.5, 0.5, 0.5],
                                   "layout": "NCHW"}}],
        "outputs": [{"name": "probabilities", "datatype": "FP32", "shape": [-1, len(COLORS)],
                     "label_filename": "labels.txt"}],
        "max_batch_size": 16,
    },
}
EXTRA_FILES = {"colors": {"labels.txt": "".join(f"{c}\n" for c in COLORS)}}


def name_layers(symbol: Path) -> None:
    """Traced graphs name op nodes `node_<k>` (as MXNet 2.x does); the demo models get names a
    reader can follow instead: dense0, relu0, conv1, pool1, … (per kind, in graph order)."""
    text = symbol.read_text()
    counts: dict[str, int] = {}
    for node in json.loads(text)["nodes"]:
        if node["op"] == "null":
            continue
        op = get_op(node["op"], node["name"])
        kind = op.layer_stem(op.parse_attrs(node.get("attrs", {}), node["name"]))
        new = f"{kind}{counts.get(kind, 0)}"
        counts[kind] = counts.get(kind, 0) + 1
        # in place, so the file keeps the exporter's layout
        text = text.replace(f'"name": "{node["name"]}"', f'"name": "{new}"', 1)
    symbol.write_text(text)


def export_model(name: str, builder, store: Path) -> Path:
    mx.random.seed(SEED)
    net, shape = builder()
    net.hybridize()
    x = mx.np.array(np.random.default_rng(SEED).standard_normal(shape).astype(np.float32))
    net(x)                                       # trace once, then export the graph
    vdir = store / name / "1"
    if vdir.exists():
        shutil.rmtree(vdir)
    vdir.mkdir(parents=True)
    net.export(str(vdir / name), epoch=0)
    name_layers(vdir / f"{name}-symbol.json")
    (store / name / "config.json").write_text(json.dumps({"name": name, **CONFIGS[name]},
                                                          indent=2) + "\n")
    for fname, text in EXTRA_FILES.get(name, {}).items():
        (store / name / fname).write_text(text)
    return vdir


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    store = Path(argv[0] if argv else "model_store")
    store.mkdir(parents=True, exist_ok=True)
    for name, builder in (("mlp", build_mlp), ("lenet", build_lenet), ("colors", build_colors)):
        vdir = export_model(name, builder, store)
        print(f"exported {name} → {vdir}: {sorted(p.name for p in vdir.iterdir())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
