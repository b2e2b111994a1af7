"""`quantize_net` against real MXNet 1.9.1's (tests/fixtures/quantization/, recorded by
tests/interop/gen_quant_refs.py): on the same float networks and calibration data, the returned
graph is MXNet's node for node (operators, names, attributes, inputs, fused subgraphs), the
calibrated ranges equal MXNet's to float32 rounding, and the INT8 outputs match MXNet's INT8
outputs within a few quantization steps."""
from __future__ import annotations

import json
import os
import warnings

import numpy as np
import pytest

import framework as mx
from framework.contrib.quantization import (CalibrationDataError, QuantizationError,
                                            quantize_net)
from framework.gluon import SymbolBlock, nn
from framework.symbol.json_io import to_json

FIX = os.path.join(os.path.dirname(__file__), "..", "fixtures", "quantization")
CASES = {
    "naive": dict(calib_mode="naive"),
    "entropy": dict(calib_mode="entropy"),
    "none": dict(calib_mode="none"),
    "int8": dict(calib_mode="naive", quantized_dtype="int8"),
    "excl": dict(calib_mode="naive", exclude_layers=["res0_conv1_fwd"],
                 exclude_operators=["Pooling"]),
    "smart": dict(calib_mode="naive", quantize_mode="smart"),
    "match": dict(calib_mode="naive", exclude_layers_match=["dense1"]),
}
NETS = [("res", c) for c in ("naive", "entropy", "none", "int8", "excl")] + \
       [("branchy", c) for c in ("naive", "smart", "match")] + \
       [pytest.param("branchy", "entropy", marks=pytest.mark.slow)]  # entropy: ~15 s a net
_RANGE = ("min_calib_range", "max_calib_range")


def _float_net(name: str) -> SymbolBlock:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return SymbolBlock.imports(os.path.join(FIX, f"{name}-symbol.json"), ["data"],
                                   os.path.join(FIX, f"{name}-0000.params"))


def _quantize(name: str, case: str):
    data = np.load(os.path.join(FIX, f"{name}-calib.npz"))
    kw = dict(CASES[case])
    if kw["calib_mode"] == "none":
        kw["data_shapes"] = [(8, 3, 16, 16)]
    else:   # what a DataLoader over (data, label) yields: MXNet's fixture used batch 8
        x = data["calib"]
        kw.update(calib_data=[(x[i:i + 8], np.zeros(8, np.float32)) for i in range(0, 32, 8)],
                  num_calib_examples=32)
    return quantize_net(_float_net(name), **kw), data


def _rows(graph: dict) -> list:
    nodes = graph["nodes"]
    out = []
    for n in nodes:
        attrs = {k: v for k, v in n.get("attrs", {}).items() if not k.startswith("__")}
        subs = [_rows(g) for g in n.get("subgraphs", [])]
        out.append((n["op"], n["name"], attrs, [(nodes[i[0]]["name"], i[1]) for i in n["inputs"]],
                    subs))
    return out


def _split_ranges(rows: list) -> tuple[list, list]:
    ranges, plain = [], []
    for op, name, attrs, ins, subs in rows:
        ranges += [(name, k, float(attrs[k])) for k in _RANGE if k in attrs]
        plain.append((op, name, {k: v for k, v in attrs.items() if k not in _RANGE}, ins, subs))
    return plain, ranges


@pytest.mark.parametrize("name,case", NETS)
def test_graph_is_mxnets(name, case):
    q, _ = _quantize(name, case)
    ours = json.loads(to_json(q._cached_graph[1], version=10901, np_shape=False))
    with open(os.path.join(FIX, f"{name}-{case}-qsymbol.json")) as f:
        ref = json.load(f)
    (a, ra), (b, rb) = _split_ranges(_rows(ours)), _split_ranges(_rows(ref))
    assert a == b
    assert [r[:2] for r in ra] == [r[:2] for r in rb]
    np.testing.assert_allclose([r[2] for r in ra], [r[2] for r in rb], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name,case", [("res", "naive"), ("res", "none"), ("res", "excl"),
                                       ("branchy", "naive"), ("branchy", "match"),
                                       pytest.param("branchy", "entropy",
                                                    marks=pytest.mark.slow)])
def test_int8_outputs_match_mxnets(name, case):
    q, data = _quantize(name, case)
    out = q(mx.np.array(data["test"])).asnumpy()
    ref = np.load(os.path.join(FIX, f"{name}-qout.npz"))[case]
    # a level flipped upstream (ranges equal MXNet's only to float32 rounding) moves an
    # output by a step or two
    step = np.abs(ref).max() / 127
    np.testing.assert_allclose(out, ref, atol=3 * step, rtol=0)
    assert np.abs(out - data["float_out"]).max() < 0.25 * np.abs(data["float_out"]).max()


def test_quantized_block_hybridizes_summarises_and_exports(tmp_path):
    q, data = _quantize("res", "naive")
    x = mx.np.array(data["test"][:2])
    q.hybridize()
    y = q(x).asnumpy()
    sym_file, params_file = q.export(str(tmp_path / "q"), format="1.x")
    back = SymbolBlock.imports(sym_file, ["data"], params_file)
    np.testing.assert_array_equal(back(x).asnumpy(), y)
    with open(sym_file) as f:
        ops = {n["op"] for n in json.load(f)["nodes"]}
    assert {"_contrib_quantize_v2", "_sg_mkldnn_conv", "_sg_mkldnn_fully_connected"} <= ops


class _Tiny(nn.HybridBlock):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2D(4, 3, in_channels=3, activation="relu")
        self.fc = nn.Dense(3, in_units=4 * 6 * 6)

    def forward(self, x):
        return self.fc(self.conv(x))


def test_gluon2_network_and_duck_typed_data():
    net = _Tiny()
    net.initialize()
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, (12, 3, 8, 8)).astype(np.float32)
    loader = [mx.np.array(x[i:i + 4]) for i in range(0, 12, 4)]       # bare arrays
    q = quantize_net(net, calib_mode="naive", calib_data=loader, num_calib_examples=8)
    ops = [n.opname for n in q._cached_graph[1].topo() if not n.is_var]
    assert ops[0] == "_contrib_quantize_v2" and "_sg_mkldnn_conv" in ops
    ref = net(mx.np.array(x)).asnumpy()
    out = q(mx.np.array(x)).asnumpy()
    assert np.abs(out - ref).max() < 0.1 * np.abs(ref).max()


@pytest.mark.parametrize("kw,match", [
    (dict(quantized_dtype="int4", calib_mode="none", data_shapes=[(1, 3, 8, 8)]), "quantized_dtype"),
    (dict(quantize_mode="fast", calib_mode="none", data_shapes=[(1, 3, 8, 8)]), "quantize_mode"),
    (dict(calib_mode="kl", data_shapes=[(1, 3, 8, 8)]), "calib_mode"),
    (dict(calib_mode="naive", data_shapes=[(1, 3, 8, 8)]), "calib_data must be provided"),
    (dict(calib_mode="none"), "data_shapes required"),
    (dict(calib_mode="none", data_shapes=[(1, 3, 8, 8)], exclude_layers="conv0"),
     "exclude_layers must be a list"),
    (dict(calib_mode="naive", calib_data=[np.zeros((1, 3, 8, 8), np.float32)],
          num_calib_examples=0), "num_calib_examples"),
    (dict(calib_mode="customize", calib_data=[np.zeros((1, 3, 8, 8), np.float32)]),
     "LayerOutputCollector"),
    (dict(calib_mode="naive", calib_data=[]), "no batches"),
])
def test_bad_arguments_are_named(kw, match):
    with pytest.raises(QuantizationError, match=match):
        quantize_net(_Tiny(), **kw)


def test_calib_data_must_iterate():
    with pytest.raises(CalibrationDataError, match="not a valid iterator"):
        quantize_net(_Tiny(), calib_mode="naive", calib_data=42)


def test_mxnet_spelling_and_onnxruntime_backend():
    assert mx.contrib.quantization.quantize_net is quantize_net
    q, data = _quantize("branchy", "naive")
    x = mx.np.array(data["test"][:4])
    want = q(x).asnumpy()
    q.optimize_for(x, backend="onnxruntime")     # regions that lower run in ORT, the rest NumPy
    np.testing.assert_allclose(q(x).asnumpy(), want, rtol=1e-5, atol=1e-5)


class _MinMax:
    """A user's collector (MXNet's LayerOutputCollector protocol): collect(name, array)."""

    def __init__(self):
        self.min_max_dict: dict = {}

    def collect(self, name, arr):
        lo, hi = float(np.min(arr)), float(np.max(arr))
        old = self.min_max_dict.get(name, (lo, hi))
        self.min_max_dict[name] = (min(old[0], lo), max(old[1], hi))


def test_customize_collector_and_logger(caplog):
    import logging
    data = np.load(os.path.join(FIX, "branchy-calib.npz"))
    x = data["calib"]
    col = _MinMax()
    with caplog.at_level(logging.INFO, logger="quant-test"):
        q = quantize_net(_float_net("branchy"), calib_mode="customize",
                         calib_data=[(x[i:i + 8], np.zeros(8)) for i in range(0, 32, 8)],
                         LayerOutputCollector=col, logger=logging.getLogger("quant-test"))
    assert "data" in col.min_max_dict and "sg_mkldnn_conv_act_0_output" in col.min_max_dict
    assert any("Collected statistics from 32 examples" in r.message for r in caplog.records)
    ours = json.loads(to_json(q._cached_graph[1], version=10901, np_shape=False))
    with open(os.path.join(FIX, "branchy-naive-qsymbol.json")) as f:
        ref = json.load(f)
    assert _split_ranges(_rows(ours))[0] == _split_ranges(_rows(ref))[0]   # min/max = naive
