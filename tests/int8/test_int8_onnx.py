"""MXNet 1.9.1's INT8 exports on the ONNX Runtime engine (`optimize_for(backend='onnxruntime')`)
and exported to ONNX (QDQ) for stock onnxruntime: every calibrated graph is lowered whole, and
its output stays within the bound of tests/int8/test_mxnet_int8_exports.py."""
from __future__ import annotations

import numpy as np
import pytest

import onnx
import onnxruntime as ort

import framework as fw

from .int8_fixtures import FIXTURES, NAMES, imports, output_bound

CALIBRATED = [n for n in NAMES if "_none_" not in n]


def _ops(net) -> list[str]:
    return [n.opname for n in net._cached_graph[1].topo() if not n.is_var]


@pytest.mark.parametrize("name", CALIBRATED)
def test_ort_runs_the_whole_int8_graph(name):
    net, x, io = imports(name)
    net.optimize_for(fw.np.array(x), backend="onnxruntime")
    assert _ops(net) == ["_sg_onnxruntime"]
    y = net(fw.np.array(x)).asnumpy()
    np.testing.assert_allclose(y, io["output"], rtol=0, atol=output_bound(name))


def test_uncalibrated_graph_stays_on_numpy():
    """Ranges measured at run time (calib_mode='none') are not lowered: NumPy runs them, and
    the result is still MXNet's."""
    net, x, io = imports("convnet_none_auto")
    net.optimize_for(fw.np.array(x), backend="onnxruntime")
    assert "_contrib_quantize_v2" in _ops(net)
    y = net(fw.np.array(x)).asnumpy()
    np.testing.assert_allclose(y, io["output"], rtol=0, atol=output_bound("convnet_none_auto"))


@pytest.mark.parametrize("name", ["resnet_naive_auto", "mobilenet_naive_auto", "mlp_naive_auto"])
def test_export_onnx_runs_in_stock_onnxruntime(tmp_path, name):
    net, x, io = imports(name)
    net(fw.np.array(x))
    path = net.export(str(tmp_path / name), format="onnx")
    model = onnx.load(path)
    ops = {n.op_type for n in model.graph.node}
    assert {"QuantizeLinear", "DequantizeLinear"} <= ops
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    (y,) = sess.run(None, {sess.get_inputs()[0].name: x})
    np.testing.assert_allclose(y, io["output"], rtol=0, atol=output_bound(name))


def test_strided_stem_rewritten_as_space_to_depth_matches_numpy(tmp_path):
    """A 7×7 stride-2 first convolution (ResNet's stem) lowers as a space-to-depth 4×4 one:
    the same integer products, so ORT reproduces the NumPy INT8 kernels."""
    import json
    from framework.io.params_file import load_params, save_params
    sym_file, params_file = (FIXTURES / "resnet_naive_auto-symbol.json",
                             FIXTURES / "resnet_naive_auto-0000.params")
    graph = json.loads(sym_file.read_text())
    stem = next(n for n in graph["nodes"] if n["op"] == "_sg_mkldnn_conv")
    inner = next(n for n in stem["subgraphs"][0]["nodes"] if n["op"] == "Convolution")
    inner["attrs"].update(kernel="(7, 7)", stride="(2, 2)", pad="(3, 3)")
    wname = graph["nodes"][stem["inputs"][1][0]]["name"]
    params = dict(load_params(str(params_file)))
    params[f"arg:{wname}"] = np.random.default_rng(5).normal(
        0, 0.1, (params[f"arg:{wname}"].shape[0], 3, 7, 7)).astype(np.float32)
    (tmp_path / "stem-symbol.json").write_text(json.dumps(graph))
    save_params(str(tmp_path / "stem-0000.params"), params, format="legacy")
    x = fw.np.array(np.load(FIXTURES / "resnet_naive_auto-io.npz")["data"])
    ref = fw.gluon.SymbolBlock.imports(str(tmp_path / "stem-symbol.json"), ["data"],
                                       str(tmp_path / "stem-0000.params"))
    net = fw.gluon.SymbolBlock.imports(str(tmp_path / "stem-symbol.json"), ["data"],
                                       str(tmp_path / "stem-0000.params"))
    net.optimize_for(x, backend="onnxruntime")
    assert _ops(net) == ["_sg_onnxruntime"]
    y, want = net(x).asnumpy(), ref(x).asnumpy()
    np.testing.assert_allclose(y, want, rtol=0, atol=6 / 127.5 * max(1, np.abs(want).max()))
