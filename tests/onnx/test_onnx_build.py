"""lower_symbol / lowerable: model structure, refusals naming node and op, dynamic batch."""
import numpy as np
import pytest

from framework.base import MXNetError
from framework.onnx import OnnxLoweringError, lower_symbol, lowerable, refusal
from framework.ops.registry import OpDef
from framework.symbol.graph import Node, Symbol

from onnx_util import op_symbol, run_onnx, session


def _conv_bn_relu(filters: int = 4):
    x = Node("null", "data")
    w, b = Node("null", "w"), Node("null", "b")
    conv = Node("Convolution", "conv0", {"kernel": "(3, 3)", "num_filter": str(filters),
                                         "pad": "(1, 1)"},
                [(x, 0), (w, 0), (b, 0)])
    bn_in = [(conv, 0)] + [(Node("null", n), 0) for n in ("g", "beta", "mean", "var")]
    bn = Node("BatchNorm", "bn0", {"fix_gamma": "False"}, bn_in)
    act = Node("Activation", "relu0", {"act_type": "relu"}, [(bn, 0)])
    return Symbol([(act, 0)])


def _params(rng, filters: int = 4):
    f = filters
    return {"w": rng.standard_normal((f, 3, 3, 3)).astype(np.float32),
            "b": rng.standard_normal(f).astype(np.float32),
            "g": rng.uniform(0.5, 1.5, f).astype(np.float32),
            "beta": rng.standard_normal(f).astype(np.float32),
            "mean": rng.standard_normal(f).astype(np.float32),
            "var": rng.uniform(0.5, 1.5, f).astype(np.float32)}


def test_inputs_initializers_outputs_and_dynamic_batch():
    rng = np.random.default_rng(0)
    sym, params = _conv_bn_relu(), _params(rng)
    model = lower_symbol(sym, params, {"data": (2, 3, 5, 5)})
    assert [i.name for i in model.graph.input] == ["data"]
    assert model.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    assert sorted(t.name for t in model.graph.initializer) == sorted(params)
    assert [o.name for o in model.graph.output] == sym.list_outputs()
    assert model.opset_import[0].version >= 17
    from framework.compiler import Plan
    for n in (2, 5):                           # lowered at batch 2, run at 2 and 5
        x = rng.standard_normal((n, 3, 5, 5)).astype(np.float32)
        want = Plan(sym, sym.list_inputs()).run([{"data": x, **params}[k]
                                                 for k in sym.list_inputs()])[0]
        got = session(model).run(None, {"data": x})[0]
        np.testing.assert_allclose(got, np.asarray(want), rtol=1e-4, atol=1e-5)


def test_external_initializers_are_referenced_not_copied():
    """With `external`, large parameters stay out of the model (marked external) and are handed
    to the session by reference; small constants stay inline. Same outputs as inline."""
    from framework.onnx.context import EXTERNAL_BYTES
    from framework.onnx.runtime import SessionConfig, make_session
    rng = np.random.default_rng(2)
    sym, params = _conv_bn_relu(64), _params(rng, 64)      # w: 6912 bytes, the rest 256 each
    external: dict = {}
    model = lower_symbol(sym, params, {"data": (2, 3, 5, 5)}, external=external)
    assert params["w"].nbytes >= EXTERNAL_BYTES > params["b"].nbytes
    assert list(external) == ["w"] and np.shares_memory(external["w"], params["w"])
    stored = {t.name: t for t in model.graph.initializer}
    assert stored["w"].data_location == 1 and not stored["w"].raw_data       # EXTERNAL
    assert len(stored["b"].raw_data) == params["b"].nbytes
    assert model.ByteSize() < params["w"].nbytes
    x = rng.standard_normal((2, 3, 5, 5)).astype(np.float32)
    got = make_session(model, SessionConfig(intra_op_threads=1), external).run(None, {"data": x})
    want = session(lower_symbol(sym, params, {"data": (2, 3, 5, 5)})).run(None, {"data": x})
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-6)


def test_static_batch_when_asked():
    model = lower_symbol(_conv_bn_relu(), _params(np.random.default_rng(1)),
                         {"data": (2, 3, 5, 5)}, dynamic_batch=False)
    assert model.graph.input[0].type.tensor_type.shape.dim[0].dim_value == 2


def _foreign_node():
    op = OpDef(name="_test_no_onnx", kernel=lambda a, x: x)
    return Node("_test_no_onnx", "mystery0", {}, [(Node("null", "data"), 0)], op=op)


def test_unsupported_op_is_refused_naming_node_and_op():
    node = _foreign_node()
    assert not lowerable(node)
    assert "no ONNX lowering" in refusal(node)
    with pytest.raises(OnnxLoweringError, match=r"node 'mystery0' \(op _test_no_onnx\)"):
        lower_symbol(Symbol([(node, 0)]), {}, {"data": (2, 3)})
    assert issubclass(OnnxLoweringError, MXNetError)


def test_attr_refusal_without_building():
    sym = op_symbol("Dropout", {"p": 0.5, "mode": "always"}, 1)
    node = sym.outputs[0][0]
    assert refusal(node) == "random dropout at inference"
    with pytest.raises(OnnxLoweringError, match=r"node 'node' \(op Dropout\).*random dropout"):
        lower_symbol(sym, {}, {"x0": (2, 3)})
    assert lowerable(op_symbol("Dropout", {"p": 0.5}, 1).outputs[0][0])


def test_output_of_a_parameter_and_duplicate_outputs():
    x = Node("null", "data")
    act = Node("Activation", "act", {"act_type": "tanh"}, [(x, 0)])
    sym = Symbol([(act, 0), (act, 0), (x, 0)])
    v = np.linspace(-2, 2, 6, dtype=np.float32).reshape(2, 3)
    outs = run_onnx(sym, {}, {"data": v})
    np.testing.assert_allclose(outs[0], np.tanh(v), rtol=1e-6)
    np.testing.assert_allclose(outs[1], np.tanh(v), rtol=1e-6)
    np.testing.assert_array_equal(outs[2], v)
