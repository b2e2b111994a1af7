"""Shared by the interop scripts (run under both hybridserve's Python and the MXNet venvs).

Pure Python on purpose: no numpy-2-only or framework imports.
"""
from __future__ import annotations

import hashlib
import os
import zlib

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ARTIFACTS = os.path.join(REPO, "artifacts", "interop")

# MXNet's get_model names, in a stable order
ZOO_MODELS = [
    "resnet18_v1", "resnet34_v1", "resnet50_v1", "resnet101_v1", "resnet152_v1",
    "resnet18_v2", "resnet34_v2", "resnet50_v2", "resnet101_v2", "resnet152_v2",
    "vgg11", "vgg13", "vgg16", "vgg19", "vgg11_bn", "vgg13_bn", "vgg16_bn", "vgg19_bn",
    "alexnet", "densenet121", "densenet161", "densenet169", "densenet201",
    "squeezenet1.0", "squeezenet1.1", "inceptionv3",
    "mobilenet1.0", "mobilenet0.75", "mobilenet0.5", "mobilenet0.25",
    "mobilenetv2_1.0", "mobilenetv2_0.75", "mobilenetv2_0.5", "mobilenetv2_0.25",
]

# the representative subset the issue asks to run at least
SUBSET = ["resnet18_v1", "resnet50_v2", "vgg11_bn", "alexnet", "densenet121", "squeezenet1.1",
          "mobilenet1.0", "mobilenetv2_1.0", "inceptionv3"]


def input_size(name: str) -> int:
    """The standard ImageNet input side: 299 for Inception v3, else 224."""
    return 299 if name.startswith("inception") else 224


def small_input_size(name: str) -> int:
    """Smallest convenient side that the architecture accepts (fast default tests).

    DenseNet / SqueezeNet / Inception end in fixed-size average pools, so they keep the
    standard size; AlexNet needs >= 63.
    """
    if name.startswith(("densenet", "squeezenet", "inception")):
        return input_size(name)
    if name == "alexnet":
        return 63
    return 32


def seed_of(name: str) -> int:
    return zlib.crc32(name.encode("utf-8")) & 0x7FFFFFFF


def file_stem(name: str) -> str:
    """File-name-safe model name (`squeezenet1.1` → `squeezenet1_1`)."""
    return name.replace(".", "_")


def params_digest(named_shapes) -> str:
    """sha256 over 'name shape' lines in collect_params order (structure fingerprint)."""
    text = "\n".join(f"{n} {tuple(int(d) for d in s)}" for n, s in named_shapes)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def rand_kind(pname: str) -> str | None:
    """Which distribution a parameter gets when randomised (None: keep the initializer's)."""
    for suffix, kind in (("running_var", "var"), ("moving_var", "var"),
                         ("running_mean", "mean"), ("moving_mean", "mean"),
                         ("gamma", "gamma"), ("beta", "beta"), ("bias", "bias")):
        if pname.endswith(suffix):
            return kind
    return None


def draw(rs, kind: str, shape):
    """N(0,0.1) means/betas/biases, U(0.5,1.5) vars/gammas (numpy RandomState `rs`)."""
    if kind in ("var", "gamma"):
        return rs.uniform(0.5, 1.5, shape)
    return rs.normal(0.0, 0.1, shape)
