"""The MXNet 1.x writer (`framework.symbol.legacy_export`): op names, attribute spellings,
variables, graph attributes, errors, and reloading by hybridserve's own loader.

(That real MXNet 1.9.1 loads these files is checked by tests/interop/check_export_1x.py.)
"""
from __future__ import annotations

import json
import warnings

import numpy as onp
import pytest

import framework as mx
from fixture_util import FIXTURES, fixture_names
from framework import np, npx
from framework.gluon import HybridBlock, SymbolBlock, nn, rnn
from framework.gluon.model_zoo import vision
from framework.ops.registry import get_op
from framework.ops.legacy_forms import _np_reshape_codes
from framework.ops.mxnet191 import MX191_OPS
from framework.symbol.legacy_export import (LegacyExportError, export_legacy, legacy_op_for,
                                            to_legacy)


class NpModel(HybridBlock):
    """Gluon-2 style model whose trace has numpy-style ops (`_npi_*`, `_npx_*`)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2D(4, 3, padding=1, use_bias=False)
        self.bn = nn.BatchNorm()
        self.dense = nn.Dense(3)

    def forward(self, x):
        y = npx.relu(self.bn(self.conv(x)))
        y = y * 2.0 + 1.0 - np.mean(y, axis=(2, 3), keepdims=True)
        z = npx.reshape(y, (-2, -5, -2))
        z = np.transpose(z, (0, 2, 1))
        z = np.concatenate([z, np.exp(z * 0.1)], axis=1)
        z = np.sum(z, axis=1) / 3.0
        return self.dense(z), npx.sigmoid(np.maximum(z, 0.5))


def _run(net, *xs):
    return [o.asnumpy() for o in (lambda r: r if isinstance(r, (list, tuple)) else [r])(net(*xs))]


@pytest.fixture
def exported(tmp_path):
    net = NpModel()
    net.initialize(mx.init.Xavier())
    x = np.array(onp.random.RandomState(0).standard_normal((2, 3, 5, 5)).astype(onp.float32))
    net.hybridize()
    want = _run(net, x)
    sym_file, params_file = export_legacy(net, str(tmp_path / "m"))
    return sym_file, params_file, x, want


def test_graph_file_is_1x(exported):
    sym_file, params_file, _, _ = exported
    doc = json.loads(open(sym_file).read())
    assert doc["attrs"] == {"mxnet_version": ["int", 10901]}
    ops = [n["op"] for n in doc["nodes"] if n["op"] != "null"]
    assert all(op in MX191_OPS for op in ops)
    assert not any(op.startswith(("_npi_", "_npx_")) for op in ops), ops
    assert {"relu", "_mul_scalar", "_plus_scalar", "broadcast_sub", "mean", "Reshape",
            "transpose", "Concat", "exp", "sum", "_div_scalar", "_maximum_scalar",
            "sigmoid"} <= set(ops)
    byop = {n["op"]: n.get("attrs", {}) for n in doc["nodes"]}
    assert byop["Convolution"]["kernel"] == "(3, 3)" and byop["Convolution"]["no_bias"] == "True"
    assert byop["BatchNorm"]["fix_gamma"] == "False" and byop["BatchNorm"]["eps"] == "1e-05"
    assert byop["Reshape"]["shape"] == "(0, -3, 0)"
    assert byop["mean"] == {"axis": "(2, 3)", "keepdims": "True"}
    assert {n["attrs"]["scalar"] for n in doc["nodes"] if n["op"] == "_mul_scalar"} == {"2.0", "0.1"}
    for n in doc["nodes"]:
        assert not any(k == "__profiler_scope__" for k in n.get("attrs", {}))
    assert open(params_file, "rb").read(8) == (0x112).to_bytes(8, "little")   # legacy binary


def test_reload_gives_identical_outputs(exported):
    sym_file, params_file, x, want = exported
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        net = SymbolBlock.imports(sym_file, ["data"], params_file)
    for got, w in zip(_run(net, x), want):
        onp.testing.assert_array_equal(got, w)


def test_unknown_dims_are_zero_in_var_shapes():
    var = mx.sym.var("w", shape=(3, -1))
    leg = to_legacy(mx.sym.FullyConnected(data=mx.sym.var("data"), weight=var, num_hidden=3,
                                          no_bias=True))
    w = next(n for n in leg.topo() if n.name == "w")
    assert w.attrs["__shape__"] == "(3, 0)"


def test_op_name_mapping():
    assert legacy_op_for("_npi_add", get_op("_npi_add")) == "broadcast_add"
    assert legacy_op_for("_npi_multiply_scalar", get_op("_npi_multiply_scalar")) == "_mul_scalar"
    assert legacy_op_for("_npx_relu", get_op("_npx_relu")) == "relu"
    assert legacy_op_for("_npi_true_divide", get_op("_npi_true_divide")) == "broadcast_div"
    assert legacy_op_for("_npi_exp", get_op("_npi_exp")) == "exp"
    assert legacy_op_for("elemwise_add", get_op("elemwise_add")) == "elemwise_add"
    assert legacy_op_for("_npi_dot", get_op("_npi_dot")) == "_np_dot"   # numpy dot, kept numpy


@pytest.mark.parametrize("codes,want", [((-2, -1), (0, -1)), ((-4,), (-2,)),
                                        ((-5, -2), (-3, 0)), ((-6, 2, -1, -4), (-4, 2, -1, -2)),
                                        ((-2, -3, -2), (-3, 0)), ((-3, -4), (-3, -2)),
                                        ((4, -1), (4, -1))])
def test_reshape_codes(codes, want):
    class N:
        name, opname = "n", "_npx_reshape"
    assert _np_reshape_codes(N, codes) == want


def test_error_names_node_and_op():
    x = mx.sym.var("data")
    bad = mx.sym.Activation(data=x, act_type="mish", name="act7")
    with pytest.raises(LegacyExportError, match=r"node 'act7' \(op Activation\).*mish"):
        to_legacy(bad)
    with pytest.raises(LegacyExportError, match=r"node 'm1' \(op mish\).*no 1.x equivalent"):
        to_legacy(mx.sym.mish(data=x, name="m1"))


def test_group_norm_per_channel_is_an_error():
    net = nn.GroupNorm(num_groups=2)
    net.initialize()
    net.hybridize()
    net(np.zeros((1, 4, 3, 3)))
    with pytest.raises(LegacyExportError, match="GroupNorm"):
        export_legacy(net, None)


def test_rnn_and_zoo_export(tmp_path):
    lstm = nn.HybridSequential()            # inside a parent, begin states are traced (_zeros)
    lstm.add(rnn.LSTM(6, num_layers=2, layout="NTC", bidirectional=True))
    lstm.initialize()
    lstm.hybridize()
    x = np.array(onp.random.RandomState(2).standard_normal((2, 5, 3)).astype(onp.float32))
    want = lstm(x).asnumpy()
    sym_file, params_file = export_legacy(lstm, str(tmp_path / "lstm"))
    ops = {n["op"] for n in json.load(open(sym_file))["nodes"]}
    assert {"RNN", "SwapAxis", "_zeros"} <= ops
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        back = SymbolBlock.imports(sym_file, ["data"], params_file)
    onp.testing.assert_array_equal(back(x).asnumpy(), want)


def test_hybridblock_export_format_1x(tmp_path):
    net = vision.mobilenet_v2_0_25(classes=4)
    net.initialize()
    net.hybridize()
    net(np.zeros((1, 3, 32, 32)))
    files = net.export(str(tmp_path / "mb"), format="1.x")
    assert json.load(open(files[0]))["attrs"] == {"mxnet_version": ["int", 10901]}


@pytest.mark.parametrize("version,name", [(v, n) for v in ("mxnet-1.9.1", "mxnet-2.0.0b1")
                                          for n in fixture_names(v) if n != "nn_layers_2"])
def test_fixtures_round_trip_through_1x(version, name, tmp_path):
    d = FIXTURES / version
    io = onp.load(d / f"{name}-io.npz")
    ins = sorted((k for k in io.files if k.startswith("data")), key=lambda k: int(k[4:] or 0))
    xs = [np.array(io[k]) for k in ins]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        net = SymbolBlock.imports(str(d / f"{name}-symbol.json"), ins, str(d / f"{name}-0000.params"))
        net.hybridize()
        want = _run(net, *xs)
        files = export_legacy(net, str(tmp_path / name), input_shapes={k: io[k].shape for k in ins})
        back = SymbolBlock.imports(files[0], ins, files[1])
    for got, w in zip(_run(back, *xs), want):
        onp.testing.assert_array_equal(got, w)


def test_full_reductions_keep_numpy_ops():
    """np.sum(x) is 0-d but 1.x `sum` gives shape (1,): the numpy op (which 1.9.1 has) stays."""
    x = mx.sym.var("data")
    leg = to_legacy(mx.sym.Group([mx.sym._npi_mean(x, axis=None, dtype="float32"),
                                  mx.sym._npi_sum(x, axis=(1,)), mx.sym._npi_max(x)]))
    assert [n.opname for n in leg.topo() if not n.is_var] == ["_npi_mean", "sum", "_np_max"]
