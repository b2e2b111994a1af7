"""framework.gluon.model_zoo.vision against MXNet's own zoo (numbers recorded from MXNet 1.9.1 in
tests/fixtures/zoo_reference.json by tests/interop/zoo_reference_mx.py).

Every architecture builds; its parameter count, output shape and structural parameter names
(with shapes) equal MXNet's. Inputs are as small as each architecture allows, parameters are
zero-initialised, so the whole file stays fast; the deepest networks are marked slow.
"""
from __future__ import annotations

import hashlib
import json
import os
import sys

import numpy as onp
import pytest

import framework as mx
from framework import np
from framework.gluon.model_zoo import get_model_file, vision

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(__file__)), "interop"))
from zoo_common import ZOO_MODELS, params_digest, small_input_size  # noqa: E402

REF = json.loads((__import__("pathlib").Path(__file__).parents[1] / "fixtures" /
                  "zoo_reference.json").read_text())["models"]
# the heaviest to run even at small inputs (DenseNet needs 224x224): slow suite only
HEAVY = {"resnet101_v1", "resnet152_v1", "resnet101_v2", "resnet152_v2", "densenet161",
         "densenet169", "densenet201"}


def _zeros(net):
    """Zero every parameter's initializer (layer-provided ones too): shapes are what we test."""
    for p in net.collect_params().values():
        p.init = "zeros"
    net.initialize()
    return net


def _count(net) -> int:
    return int(sum(int(onp.prod(p.shape)) for p in net.collect_params().values()))


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in HEAVY else n
                                  for n in ZOO_MODELS])
def test_architecture_matches_mxnet(name):
    ref = REF[name]["small"]
    side = small_input_size(name)
    assert ref["input"] == [1, 3, side, side]
    net = _zeros(vision.get_model(name))
    out = net(np.zeros((1, 3, side, side)))
    named = net.collect_params()
    assert list(out.shape) == ref["output_shape"]
    assert _count(net) == ref["params"]
    assert len(named) == ref["n_param_arrays"]
    assert params_digest((k, p.shape) for k, p in named.items()) == ref["digest"]


def test_reference_covers_every_architecture():
    assert sorted(REF) == sorted(ZOO_MODELS) == vision.model_names()
    # standard-input counts are MXNet's published sizes, e.g. ResNet-50 v1 25.6 M
    assert REF["resnet50_v1"]["standard"]["params"] == 25629032
    assert REF["vgg16"]["standard"]["params"] == 138357544


@pytest.mark.parametrize("name,side", [("resnet18_v1", 224), ("squeezenet1.1", 224),
                                       ("mobilenet0.25", 224)])
def test_standard_input_counts(name, side):
    net = _zeros(vision.get_model(name))
    out = net(np.zeros((1, 3, side, side)))
    assert list(out.shape) == REF[name]["standard"]["output_shape"]
    assert _count(net) == REF[name]["standard"]["params"]


def test_constructor_names_and_aliases():
    for ctor in ("resnet18_v1", "resnet152_v2", "vgg19_bn", "alexnet", "densenet201",
                 "squeezenet1_0", "squeezenet1_1", "inception_v3", "mobilenet1_0",
                 "mobilenet0_25", "mobilenet_v2_1_0", "mobilenet_v2_0_25"):
        assert callable(getattr(vision, ctor))
    assert isinstance(vision.get_model("inception_v3"), vision.Inception3)
    assert isinstance(vision.get_model("InceptionV3"), vision.Inception3)
    assert isinstance(vision.get_model("mobilenet_v2_1.0"), vision.MobileNetV2)
    assert isinstance(vision.get_model("squeezenet1_1"), vision.SqueezeNet)
    with pytest.raises(ValueError, match="Model resnet19 is not supported. Available options"):
        vision.get_model("resnet19")


def test_classes_and_thumbnail():
    net = _zeros(vision.resnet18_v1(classes=10, thumbnail=True))
    assert net(np.zeros((2, 3, 32, 32))).shape == (2, 10)
    net = _zeros(vision.get_model("mobilenetv2_0.25", classes=7))
    assert net(np.zeros((1, 3, 32, 32))).shape == (1, 7)


def test_hybridized_equals_imperative():
    rs = onp.random.RandomState(0)
    x = np.array(rs.standard_normal((2, 3, 32, 32)).astype(onp.float32))
    net = vision.mobilenet_v2_0_25(classes=10)
    net.initialize(mx.init.Xavier())
    a = net(x).asnumpy()
    net.hybridize()
    b = net(x).asnumpy()
    onp.testing.assert_array_equal(a, b)


def test_pretrained_missing_file_names_the_path(tmp_path):
    with pytest.raises(FileNotFoundError) as e:
        vision.get_model("resnet18_v1", pretrained=True, root=str(tmp_path))
    msg = str(e.value)
    assert str(tmp_path / "resnet18_v1.params") in msg and "does not download" in msg


def test_pretrained_loads_local_file(tmp_path):
    src = vision.mobilenet0_25(classes=5)
    src.initialize(mx.init.Xavier())
    x = np.array(onp.random.RandomState(1).standard_normal((1, 3, 32, 32)).astype(onp.float32))
    want = src(x).asnumpy()
    src.save_parameters(str(tmp_path / "mobilenet0.25-0123abcd.params"))
    assert get_model_file("mobilenet0.25", root=str(tmp_path)).endswith("-0123abcd.params")
    net = vision.get_model("mobilenet0.25", pretrained=True, root=str(tmp_path), classes=5)
    onp.testing.assert_array_equal(net(x).asnumpy(), want)


def test_summary_prints(capsys):
    net = _zeros(vision.mobilenet0_25(classes=10))
    net.summary(np.zeros((1, 3, 32, 32)))
    out = capsys.readouterr().out
    assert "Layer (type)" in out and "MobileNet-" in out
    assert f"Total params: {_count(net)}" in out
    net = _zeros(vision.squeezenet1_1())
    net.summary(np.zeros((1, 3, 224, 224)))
    out = capsys.readouterr().out
    assert "HybridConcatenate-" not in out and "(1, 1000)" in out   # containers get no row, as in MXNet
    assert "Unique parameters in model: 1235496" in out


def test_structural_parameter_names():
    net = _zeros(vision.resnet18_v1())
    net(np.zeros((1, 3, 32, 32)))
    names = list(net.collect_params())
    assert names[:6] == ["features.0.weight", "features.1.gamma", "features.1.beta",
                         "features.1.running_mean", "features.1.running_var",
                         "features.4.0.body.0.weight"]
    assert "features.5.0.downsample.0.weight" in names and names[-1] == "output.bias"
    digest = hashlib.sha256("\n".join(names).encode()).hexdigest()
    assert digest  # names are stable across runs (no global counters)


def test_reprs_match_mxnet2():
    """`repr(net)` of every architecture equals MXNet 2.0.0b1's (digests in zoo_reference.json)."""
    for name in ZOO_MODELS:
        text = repr(vision.get_model(name)).encode("utf-8")
        assert hashlib.sha256(text).hexdigest() == REF[name]["repr_sha256_mx2"], name
