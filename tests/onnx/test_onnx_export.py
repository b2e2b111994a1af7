"""`block.export(path, format='onnx')` and `convert()`: standard ONNX files that onnx.checker
accepts and stock onnxruntime runs with the NumPy engine's (and MXNet's) outputs."""
import numpy as np
import onnx
import pytest

import framework as mx
from fixture_util import FIXTURES, load_fixture
from framework.gluon import SymbolBlock, nn
from framework.onnx import OnnxLoweringError, convert

from onnx_util import session


def _net():
    net = nn.HybridSequential()
    net.add(nn.Conv2D(4, 3, padding=1), nn.BatchNorm(), nn.Activation("relu"),
            nn.MaxPool2D(2), nn.Flatten(), nn.Dense(5))
    net.initialize(mx.init.Xavier())
    net.hybridize()
    return net


def _load(path):
    model = onnx.load(str(path))
    onnx.checker.check_model(model, full_check=True)
    assert model.opset_import[0].version >= 17
    return model, session(model)


def test_hybrid_block_export(tmp_path):
    net = _net()
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 6, 6)).astype(np.float32)
    net(mx.np.array(x))
    path = net.export(str(tmp_path / "net"), format="onnx")
    assert path == str(tmp_path / "net.onnx")
    model, sess = _load(path)
    assert [i.name for i in model.graph.input] == ["data"]
    assert {t.name for t in model.graph.initializer} >= {"0.weight", "1.gamma", "5.weight"}
    for n in (2, 3):                                 # dynamic batch
        xb = rng.standard_normal((n, 3, 6, 6)).astype(np.float32)
        np.testing.assert_allclose(sess.run(None, {"data": xb})[0], net(mx.np.array(xb)).asnumpy(),
                                   rtol=1e-4, atol=1e-5)


def test_symbol_block_export_2x_files(tmp_path):
    d = FIXTURES / "mxnet-2.0.0b1"
    sym, params, inputs, expected = load_fixture("mxnet-2.0.0b1", "lenet")
    blk = SymbolBlock.imports(str(d / "lenet-symbol.json"), list(inputs),
                              str(d / "lenet-0000.params"))
    blk.hybridize()
    blk(*[mx.np.array(v) for v in inputs.values()])
    _, sess = _load(blk.export(str(tmp_path / "lenet"), format="onnx"))
    out = sess.run(None, inputs)[0]
    np.testing.assert_allclose(out, expected[0], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("version,name", [("mxnet-1.9.1", "mini_densenet"),
                                          ("mxnet-1.9.1", "gru_bidir_states"),
                                          ("mxnet-2.0.0b1", "embedding_lstm")])
def test_convert_mxnet_files(tmp_path, version, name):
    d = FIXTURES / version
    _, _, inputs, expected = load_fixture(version, name)
    out = convert(d / f"{name}-symbol.json", d / f"{name}-0000.params", tmp_path / "m.onnx",
                  {k: v.shape for k, v in inputs.items()})
    _, sess = _load(out)
    got = sess.run(None, {i.name: inputs[i.name] for i in sess.get_inputs()})
    for g, w in zip(got, expected):
        assert np.max(np.abs(g - w)) <= 1e-4 * max(1.0, float(np.max(np.abs(w))))


class _Inverse(mx.gluon.HybridBlock):
    def forward(self, x):
        return mx.np.linalg.inv(x) + 1


def test_export_refuses_an_op_onnx_cannot_express(tmp_path):
    blk = _Inverse()
    blk.hybridize()
    blk(mx.np.array(np.eye(3, dtype=np.float32)[None]))
    with pytest.raises(OnnxLoweringError, match=r"node '.*' \(op _npi_inv\)"):
        blk.export(str(tmp_path / "inv"), format="onnx")
    assert not (tmp_path / "inv.onnx").exists()


def test_unknown_export_format_lists_onnx():
    with pytest.raises(ValueError, match="'onnx'"):
        _net().export("x", format="2.1")
