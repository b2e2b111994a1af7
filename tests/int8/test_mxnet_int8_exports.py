"""MXNet 1.9.1's own INT8 exports (its `quantize_net`, oneDNN fused nodes) load through
`SymbolBlock.imports`, run on NumPy, summarise, and reproduce MXNet's INT8 results.

The bound ("within the quantization step"): every node, given MXNet's own inputs, computes int8/
uint8 levels within 1 level of MXNet's, identical on ≥ 99 % of them, and MXNet's [min, max] ranges
exactly; run end to end, the float output is within `output_bound` (inputs of the float-output
last layer off by up to 2 levels, carried through its weights; a 1-level difference early on may
grow by a level or two through later layers, as between two oneDNN builds).
"""
from __future__ import annotations

import numpy as np
import pytest

import framework as fw

from .int8_fixtures import NAMES, imports, internals, node_by_node, output_bound, paths


@pytest.mark.parametrize("name", NAMES)
def test_output_matches_mxnet_int8(name):
    net, x, io = imports(name)
    y = net(fw.np.array(x)).asnumpy()
    assert y.shape == io["output"].shape and y.dtype == np.float32
    np.testing.assert_allclose(y, io["output"], rtol=0, atol=output_bound(name))


def _assert_levels(ours: dict, io, max_levels: int, identical: float) -> None:
    assert ours, "the fixture records MXNet's quantized tensors"
    for key, v in ours.items():
        ref = io[f"internal:{key}"]
        assert v.dtype == ref.dtype and v.shape == ref.shape, key
        if ref.size == 1:                      # a range: MXNet's to the bit
            np.testing.assert_array_equal(v, ref, err_msg=key)
        elif ref.dtype in (np.int8, np.uint8):
            d = np.abs(v.astype(np.int32) - ref.astype(np.int32))
            assert d.max() <= max_levels, f"{key}: {d.max()} levels off"
            assert (d == 0).mean() >= identical, f"{key}: {(d > 0).mean():.2%} of levels differ"


@pytest.mark.parametrize("name", NAMES)
def test_each_node_matches_mxnet_on_mxnets_inputs(name):
    _assert_levels(node_by_node(name), paths(name)[2], 1, 0.99)


@pytest.mark.parametrize("name", ["mobilenet_naive_auto", "mlp_naive_auto", "convnet_none_auto",
                                  "addbranches_naive_auto"])
def test_executor_runs_the_graph_like_mxnet(name):
    """The bound executor (MXNet's Symbol.bind) on the same graph: exact where the kernels are."""
    _assert_levels(internals(name), paths(name)[2], 2, 0.99)


def test_summary_lists_the_quantized_graph(capsys):
    net, x, _ = imports("resnet_naive_auto")
    net.summary(fw.np.array(x))
    out = capsys.readouterr().out
    assert "(2, 10)" in out and "Total params" in out


def test_fused_fc_params_are_mxnets_int8():
    """MXNet quantizes fully-connected weights offline (int8 params beside their ranges) and
    leaves convolution weights float (quantized per channel at run time)."""
    net, _, _ = imports("convnet_naive_auto")
    dtypes = {k: v.data().dtype for k, v in net.collect_params().items()}
    assert any(k.endswith("weight_quantize") and d == np.int8 for k, d in dtypes.items())
    assert any(k.endswith("conv0_weight") or "conv" in k and k.endswith("_weight")
               and d == np.float32 for k, d in dtypes.items())


def test_excluded_layer_stays_float():
    net, x, io = imports("mlp_naive_exclude")
    sym = net._cached_graph[1]
    ops = {n.name: (n.opname, dict(n.attrs)) for n in sym.topo() if not n.is_var}
    float_fc = [k for k, (op, a) in ops.items() if op == "_sg_mkldnn_fully_connected"
                and a.get("quantized", "false").lower() != "true"]
    assert float_fc, "exclude_layers leaves one fused FC in float32"
    y = net(fw.np.array(x)).asnumpy()
    np.testing.assert_allclose(y, io["output"], rtol=0, atol=output_bound("mlp_naive_exclude"))


def test_weights_quantized_once_per_parameter_set(monkeypatch):
    """The fused conv prepares its int8 weights once, not on every forward."""
    from framework.ops._kernels import int8 as _int8
    net, x, _ = imports("resnet_naive_auto")
    net(fw.np.array(x))
    calls = []
    monkeypatch.setattr(_int8, "quantize_weight", lambda *a: calls.append(1))
    net(fw.np.array(x))
    assert calls == []


@pytest.mark.parametrize("name", ["resnet_naive_auto", "mlp_naive_exclude", "convnet_none_auto"])
def test_export_1x_round_trips(tmp_path, name):
    """The 1.x export (the files real MXNet 1.9.1 loads: tests/interop/check_int8_export.py)
    keeps the fused nodes, their subgraphs and MXNet's int8 parameters."""
    net, x, io = imports(name)
    y = net(fw.np.array(x)).asnumpy()
    sym_file, params_file = net.export(str(tmp_path / name), format="1.x")
    back = fw.gluon.SymbolBlock.imports(sym_file, ["data"], params_file)
    np.testing.assert_array_equal(back(fw.np.array(x)).asnumpy(), y)
    text = open(sym_file).read()
    assert '"subgraphs"' in text and "_sg_mkldnn_" in text
