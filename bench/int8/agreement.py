"""INT8 vs float32 agreement of `quantize_net` (issue 19's target: top-1 identical on ≥ 99 %,
top-5 overlap ≥ 4.5 of 5): a random-weight network, calibrated on 32 inputs, measured on 256
others. Weights: the model zoo's initialisation (Xavier) with BatchNorm statistics drawn as the
interop zoo exports draw them (gamma, running_var ~ U(0.5, 1.5); beta, running_mean ~
N(0, 0.1)), so BatchNorm is not an identity; inputs N(0, 1), like a normalised image.

    .venv/bin/python bench/int8/agreement.py [--model resnet18_v1] [--size 64] [--calib naive]
"""
from __future__ import annotations

import argparse
import json
import warnings

import numpy as np

import framework as mx
from framework.contrib.quantization import quantize_net
from framework.gluon.model_zoo import vision


def random_net(model: str, classes: int, seed: int = 0):
    mx.random.seed(seed)
    net = vision.get_model(model, classes=classes)
    net.initialize(mx.init.Xavier())
    net(mx.np.zeros((1, 3, 32, 32)))
    rng = np.random.default_rng(seed)
    for name, p in net.collect_params().items():
        if name.endswith(("gamma", "running_var")):
            p.set_data(mx.np.array(rng.uniform(0.5, 1.5, p.shape).astype(np.float32)))
        elif name.endswith(("beta", "running_mean")):
            p.set_data(mx.np.array(rng.normal(0, 0.1, p.shape).astype(np.float32)))
    return net


def run(net, x: np.ndarray, batch: int = 16) -> np.ndarray:
    return np.concatenate([net(mx.np.array(x[i:i + batch])).asnumpy()
                           for i in range(0, len(x), batch)])


def agreement(model: str = "resnet18_v1", size: int = 64, calib_mode: str = "naive",
              classes: int = 1000, n_calib: int = 32, n_test: int = 256) -> dict:
    net = random_net(model, classes)
    rng = np.random.default_rng(1)
    calib = rng.normal(0, 1, (n_calib, 3, size, size)).astype(np.float32)
    test = rng.normal(0, 1, (n_test, 3, size, size)).astype(np.float32)
    q = quantize_net(net, calib_mode=calib_mode,
                     calib_data=[calib[i:i + 8] for i in range(0, n_calib, 8)])
    f, i8 = run(net, test), run(q, test)
    top5f, top5q = np.argsort(-f, 1)[:, :5], np.argsort(-i8, 1)[:, :5]
    overlap = np.mean([len(set(a) & set(b)) for a, b in zip(top5f, top5q)])
    return {"model": model, "size": size, "calib_mode": calib_mode,
            "top1_identical": float(np.mean(f.argmax(1) == i8.argmax(1))),
            "top5_overlap": float(overlap),
            "max_abs_diff": float(np.abs(f - i8).max()), "max_abs_float": float(np.abs(f).max())}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="resnet18_v1")
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--calib", default="naive")
    a = ap.parse_args()
    warnings.simplefilter("ignore")
    print(json.dumps(agreement(a.model, a.size, a.calib)))


if __name__ == "__main__":
    main()
