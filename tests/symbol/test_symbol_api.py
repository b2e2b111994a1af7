"""MXNet's Symbol API beyond graphs: bind/forward, composition by call, attributes, pickling,
copies, partial shape inference, variadic ops without num_args."""
from __future__ import annotations

import copy
import json
import pickle

import numpy as onp
import pytest

import framework as mx
from framework.autograd import TrainingNotSupportedError
from framework.base import NotImplementedForSymbol


def _mlp():
    data = mx.sym.var("data")
    fc = mx.sym.FullyConnected(data=data, name="fc1", num_hidden=4)
    return mx.sym.Activation(fc, act_type="relu", name="relu1")


def test_bind_forward_matches_numpy():
    net = _mlp()
    x = onp.random.rand(2, 3).astype(onp.float32)
    w = onp.random.rand(4, 3).astype(onp.float32) - 0.5
    b = onp.random.rand(4).astype(onp.float32)
    exe = net._bind(mx.cpu(), args={"data": mx.np.array(x), "fc1_weight": mx.np.array(w),
                                     "fc1_bias": mx.np.array(b)})
    out = exe.forward()[0].asnumpy()
    onp.testing.assert_allclose(out, onp.maximum(x @ w.T + b, 0), rtol=1e-5)
    # new values through forward(**kwargs), arrays in list_arguments order for bind(args=list)
    exe2 = net.bind(mx.cpu(), args=[mx.np.array(x), mx.np.array(w), mx.np.array(b)])
    out2 = exe2.forward(data=onp.zeros_like(x))[0].asnumpy()
    onp.testing.assert_allclose(out2, onp.maximum(onp.broadcast_to(b, (2, 4)), 0), rtol=1e-6)
    with pytest.raises(TrainingNotSupportedError):
        exe2.backward()


def test_simple_bind_allocates_inferred_shapes():
    exe = _mlp()._simple_bind(mx.cpu(), data=(5, 3))
    assert exe.arg_dict["fc1_weight"].shape == (4, 3)
    assert exe.forward()[0].shape == (5, 4)


def test_simple_bind_reports_incompatible_shapes():
    v, x = mx.sym.var("v"), mx.sym.var("x")
    bad = mx.sym.transpose(v) + (x + v)      # v learns (2, 3) from x; (3, 2) + (2, 3) fails
    with pytest.raises(mx.MXNetError):
        bad._simple_bind(mx.cpu(), x=(2, 3))


def test_call_composes_by_variable_name():
    net1 = _mlp()
    head = mx.sym.FullyConnected(name="fc2", num_hidden=2)
    composed = head(fc2_data=net1, name="composed")
    assert composed.list_arguments() == ["data", "fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias"]
    assert composed.name == "composed"
    assert head.list_arguments()[0] == "fc2_data"          # the original is unchanged
    arg, out, _ = composed.infer_shape(data=(7, 3))
    assert out == [(7, 2)]


def test_set_attr_on_a_copy_leaves_the_original():
    a = mx.sym.var("a")
    b = copy.copy(a)
    b._set_attr(name="b", __mood__="calm")
    assert (a.name, b.name) == ("a", "b")
    assert b.attr("mood") == "calm" and a.attr("mood") is None
    assert copy.deepcopy(a).tojson() == a.tojson()


def test_pickle_roundtrip_and_truth_value():
    net = _mlp()
    assert pickle.loads(pickle.dumps(net)).tojson() == net.tojson()
    with pytest.raises(NotImplementedForSymbol):
        bool(net)


def test_tojson_marks_np_shape_only_under_np_shape():
    net = _mlp()
    assert "is_np_shape" in json.loads(net.tojson())["attrs"]
    with mx.util.np_shape(False):
        assert "is_np_shape" not in json.loads(net.tojson())["attrs"]
    assert mx.npx.is_np_shape()


def test_infer_shape_full_partial_and_backwards():
    data, prev = mx.sym.var("data"), mx.sym.var("prev")
    x2h = mx.sym.FullyConnected(data=data, name="x2h", num_hidden=8)
    h2h = mx.sym.FullyConnected(data=prev, name="h2h", num_hidden=8)
    out = mx.sym.elemwise_add(x2h, h2h)
    assert out.infer_shape(data=(2, 5)) == (None, None, None)       # prev unknown
    arg, outs, _ = out.infer_shape_partial(data=(2, 5))
    shapes = dict(zip(out.list_arguments(), arg))
    assert shapes["x2h_weight"] == (8, 5) and shapes["h2h_weight"] == ()
    assert outs == [(2, 8)]                       # elementwise: the known operand decides
    a, b = mx.sym.var("a", shape=(2, 3)), mx.sym.var("b")
    arg, outs, _ = mx.sym.elemwise_add(a, b).infer_shape()
    assert arg == [(2, 3), (2, 3)] and outs == [(2, 3)]           # b inferred backwards


def test_variadic_ops_count_their_inputs():
    parts = list(mx.sym.SliceChannel(mx.sym.var("data"), num_outputs=3, name="slice"))
    cat = mx.sym.Concat(*parts, dim=1)
    assert cat.get_children().list_outputs() == ["slice_output0", "slice_output1", "slice_output2"]
    assert cat.infer_shape(data=(2, 6))[1] == [(2, 6)]
    total = mx.sym.add_n(mx.sym.var("p"), mx.sym.var("q"))
    exe = total._bind(args={"p": mx.np.ones((2,)), "q": mx.np.ones((2,))})
    onp.testing.assert_array_equal(exe.forward()[0].asnumpy(), [2.0, 2.0])


def test_gen_atomic_symbol_has_fresh_inputs():
    s = mx.sym.FullyConnected(mx.sym.var("x"), num_hidden=3, name="fc")
    atom = s._gen_atomic_symbol()
    assert atom.list_arguments() != s.list_arguments()
    assert atom.infer_shape_partial()[0] == [(), (), ()]


def test_infer_shape_partial_dims_and_parameters_behind_a_cast():
    """A declared shape with 0 (unknown) dims is used as far as it goes, and a weight reached
    through a shape-preserving op (cast) still gets its shape from the consumer."""
    data = mx.sym.Variable("data", shape=(2, 0, 0, 0))
    weight = mx.sym.Variable("weight")
    conv = mx.sym.Convolution(data=mx.sym.cast(data, dtype="float16"),
                              weight=mx.sym.cast(weight, dtype="float16"), kernel=(3, 3),
                              num_filter=8, no_bias=True)
    args, outs, _ = conv.infer_shape_partial()
    assert args == [(2, 0, 0, 0), (8, 0, 3, 3)] and outs == [(2, 8, 0, 0)]
    assert conv.infer_shape()[0] is None                       # not fully known
    args, outs, _ = conv.infer_shape(data=(2, 4, 10, 10))
    assert args == [(2, 4, 10, 10), (8, 4, 3, 3)] and outs == [(2, 8, 8, 8)]
