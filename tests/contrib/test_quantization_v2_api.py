"""MXNet 2.0's quantization API (`mx.contrib.quant`) beside 1.9.1's: quantize_net's 2.0
signature, quantize_model on a symbol, the calibration collectors, nested (RNN) inputs."""
from __future__ import annotations

import numpy as np
import pytest

import framework as mx
from framework import npx
from framework.contrib import quant
from framework.contrib.quantization import QuantizationError
from framework.gluon import nn


class _Net(nn.HybridBlock):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2D(8, kernel_size=3, padding=1, use_bias=False)
        self.bn = nn.BatchNorm()
        self.fc = nn.Dense(5)

    def forward(self, x):
        return self.fc(npx.relu(self.bn(self.conv(x))))


def _net(seed: int = 0) -> _Net:
    mx.np.random.seed(seed)
    net = _Net()
    net.initialize(mx.init.Xavier())
    net(mx.np.zeros((2, 3, 6, 6)))
    return net


def _data(n: int = 8, seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).uniform(0, 1, (n, 3, 6, 6)).astype(np.float32)


class _Counting(quant.CalibrationCollector):
    """A user's collector (MXNet 2.0 protocol): collect(name, op_name, array)."""

    def __init__(self):
        super().__init__()
        self.calls: list[tuple[str, str]] = []

    def collect(self, name, op_name, arr):
        if name not in self.include_layers:
            return
        self.calls.append((name, op_name))
        a = arr.asnumpy()
        lo, hi = self.min_max_dict.get(name, (np.inf, -np.inf))
        self.min_max_dict[name] = (min(lo, float(a.min())), max(hi, float(a.max())))


def test_quant_is_quantization():
    assert mx.contrib.quant is mx.contrib.quantization
    assert quant.quantize_net is mx.contrib.quantization.quantize_net


def test_num_calib_batches_and_custom_collector():
    x = _data(8)
    loader = mx.gluon.data.DataLoader(mx.np.array(x), batch_size=2)
    col = _Counting()
    q = quant.quantize_net(_net(), quantized_dtype="auto", calib_data=loader,
                           calib_mode="custom", LayerOutputCollector=col,
                           num_calib_batches=2, device=mx.cpu())
    assert col.include_layers and set(col.min_max_dict) <= set(col.include_layers)
    seen_data = [c for c in col.calls if c[0] == "data"]
    assert len(seen_data) == 2                       # two batches of the four
    assert seen_data[0][1] == "data"                 # a variable reports its own name
    ref = _net()(mx.np.array(x)).asnumpy()
    out = q(mx.np.array(x)).asnumpy()
    assert np.abs(out - ref).max() < 0.1 * np.abs(ref).max()


def test_data_desc_shapes_and_channel_wise_fc():
    x = mx.np.array(_data(4))
    ref = _net()(x).asnumpy()
    q = quant.quantize_net(_net(), data_shapes=[mx.io.DataDesc("data", (4, 3, 6, 6))])
    assert q(x).shape == ref.shape
    loader = mx.gluon.data.DataLoader(x, batch_size=4)
    qc = quant.quantize_net(_net(), calib_data=loader, calib_mode="naive",
                            quantize_granularity="channel-wise")
    fcs = [n for n in qc._cached_graph[1].topo() if n.opname == "_sg_mkldnn_fully_connected"]
    assert fcs and fcs[0].attrs.get("channel_wise_quantize") == "True"
    assert not any(n.name.endswith("weight_quantize") for n in qc._cached_graph[1].topo()
                   if n.is_var and "fc" in n.name)
    assert np.abs(qc(x).asnumpy() - ref).max() < 0.1 * np.abs(ref).max()


@pytest.mark.parametrize("kw,match", [
    (dict(data_shapes=[(1, 3, 6, 6)], quantize_granularity="row-wise"), "quantize_granularity"),
    (dict(data_shapes=[(1, 3, 6, 6)], quantize_granularity="channel-wise"), "needs calibration"),
    (dict(data_shapes=[(1, 3, 6, 6)], device=mx.gpu()), "CPU only"),
    (dict(calib_data=[np.zeros((1, 3, 6, 6), np.float32)], calib_mode="naive",
          num_calib_batches=0), "num_calib_batches"),
    (dict(calib_data=[np.zeros((1, 3, 6, 6), np.float32)], calib_mode="custom",
          LayerOutputCollector=object()), "CalibrationCollector"),
])
def test_bad_arguments_are_named(kw, match):
    with pytest.raises(QuantizationError, match=match):
        quant.quantize_net(_net(), **kw)


def _symbol_and_params():
    net = _net()
    net.hybridize()
    net(mx.np.zeros((2, 3, 6, 6)))
    sym, _ = net.export(None)
    params = net.collect_params()
    args = {k: p._reduce() for k, p in params.items() if k in sym.list_arguments()}
    aux = {k: p._reduce() for k, p in params.items() if k in sym.list_auxiliary_states()}
    return net, sym, args, aux


def test_quantize_model_calibrates_and_runs():
    net, sym, args, aux = _symbol_and_params()
    x = _data(4)
    loader = mx.gluon.data.DataLoader(mx.np.array(x), batch_size=4)
    qsym, qargs, qaux = quant.quantize_model(sym, dict(args), aux, calib_mode="naive",
                                             calib_data=loader, num_calib_batches=1,
                                             quantized_dtype="auto", quantize_mode="full")
    attrs = qsym.attr_dict()
    requant = {k: v for k, v in attrs.items() if k.startswith("requantize_")}
    assert len(requant) == 2 and all("min_calib_range" in v for v in requant.values())
    assert all(v["out_type"] == "auto" for k, v in attrs.items() if k.endswith("_quantize")
               and "out_type" in v)
    assert qargs[[k for k in qargs if k.endswith("weight_quantize")][0]].dtype == np.int8
    assert qaux is aux
    # numerically: the un-fused int8 FC (MXNet's un-fused quantized_conv reads uint8 data with
    # int8's output range, as its kernel does, so it is left float here)
    qsym, qargs, qaux = quant.quantize_model(sym, dict(args), aux, calib_mode="naive",
                                             calib_data=loader, quantized_dtype="auto",
                                             quantize_mode="full",
                                             excluded_op_names=["Convolution"])
    assert "_contrib_quantized_fully_connected" in {n.opname for n in qsym.topo()}
    block = mx.gluon.SymbolBlock(qsym, [mx.sym.var("data")])
    block.load_dict({**qargs, **qaux}, cast_dtype=True, dtype_source="saved")
    ref = net(mx.np.array(x)).asnumpy()
    assert np.abs(block(mx.np.array(x)).asnumpy() - ref).max() < 0.05 * np.abs(ref).max()


def test_calibrate_quantized_sym_sets_ranges_by_entry_name():
    _, sym, args, _ = _symbol_and_params()
    qsym, layers = quant._quantize_symbol(sym, offline_params=list(args), quantize_mode="full")
    assert "data" in layers
    conv_out = [k for k in layers if k != "data"][0]
    cq = quant._calibrate_quantized_sym(qsym, {"data": (0.0, 1.0), conv_out: (-2.0, 3.0)})
    attrs = cq.attr_dict()
    assert attrs["data_quantize"]["max_calib_range"] == "1.000000"
    req = [v for k, v in attrs.items() if k.startswith("requantize_") and "min_calib_range" in v]
    assert req and req[0]["min_calib_range"] == "-2.000000"
    assert "min_calib_range" not in qsym.attr_dict()["data_quantize"]   # the input is unchanged


def test_histogram_collector_static_api():
    hist = [0] * 998 + [1000]
    edges = list(np.linspace(-2, 2, 1000))
    lo, hi, th, div = quant._LayerHistogramCollector.get_optimal_threshold(
        (hist, edges, -2, 2, 2), "int8", num_quantized_bins=5)
    assert abs(th - 2) < 1e-5           # mass at the edge: nothing may be clipped
    arr = np.random.default_rng(0).uniform(-10, 11, 5000)
    c = quant._LayerHistogramCollector("int8", include_layers=["a"])
    c.collect("a", "Convolution", arr)
    rng = c.post_collect()["a"]
    assert rng[0] == -rng[1] and 9 < rng[1] <= 11.01 and c.hist_dict == {}


def test_lstm_with_states_quantizes_to_the_int8_lstm():
    mx.np.random.seed(3)
    lstm = mx.gluon.rnn.LSTM(hidden_size=8)
    lstm.initialize()
    lstm.hybridize()
    x = mx.np.random.uniform(-1, 1, (5, 2, 8))
    states = [mx.np.zeros((1, 2, 8)), mx.np.zeros((1, 2, 8))]
    ref = lstm(x, states)
    q = quant.quantize_net(lstm, calib_data=[[x, states]], calib_mode="naive",
                           num_calib_batches=1)
    qsym, _ = q.export(None)
    ops = {n.opname for n in qsym.topo() if not n.is_var}
    assert {"_contrib_quantized_rnn", "_contrib_quantize_asym"} <= ops
    out = q(x, states)
    for r, o in zip([ref[0], ref[1][0], ref[1][1]], out):
        assert float(np.mean((r.asnumpy() - o.asnumpy()) ** 2)) < 1e-3
