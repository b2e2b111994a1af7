"""Epilogue fusion (passes/fuse.py): bias/residual/activation merged into `_hs_conv2d` and
`_hs_affine` only where nothing else reads the pre-epilogue value; outputs unchanged."""
import numpy as np
import pytest

from fixture_util import load_fixture
from framework.compiler.passes.fold_batchnorm import fold_batchnorm
from framework.compiler.passes.fuse import fuse_epilogues
from framework.compiler.passes.layout import to_channels_last
from framework.symbol.graph import Node, Symbol
from test_layout import ZOO, check, run


def _prepared(name):
    sym, params, inputs, expected = load_fixture("mxnet-1.9.1", name)
    new, nparams = to_channels_last(*fold_batchnorm(sym, params))
    return new, nparams, inputs, expected


@pytest.mark.parametrize("name", ZOO)
def test_fuse_keeps_outputs(name):
    new, params, inputs, expected = _prepared(name)
    fused = fuse_epilogues(new)
    check(run(fused, params, inputs), expected)
    check(run(fused, params, inputs, static=True), expected)
    assert len(fused.topo()) <= len(new.topo())


def test_resnet_blocks_fuse_sum_and_relu():
    new, params, inputs, expected = _prepared("mini_resnet_v1")
    fused = fuse_epilogues(new)
    convs = [n for n in fused.topo() if n.opname == "_hs_conv2d"]
    assert any(c.parsed.with_sum and c.parsed.act_type == "relu" for c in convs)
    ops = {n.opname for n in fused.topo()}
    assert "elemwise_add" not in ops and "Activation" not in ops


def test_mobilenet_relu6_becomes_clip_epilogue():
    new, params, inputs, expected = _prepared("mini_mobilenet_v2")
    fused = fuse_epilogues(new)
    acts = {n.parsed.act_type for n in fused.topo() if n.opname == "_hs_conv2d"}
    assert "clip" in acts
    assert not any(n.opname == "clip" for n in fused.topo())


def _conv_graph(second_reader: bool):
    x = Node("null", "data")
    w = Node("null", "w")
    c = Node("_hs_conv2d", "c", {"kernel": "(1, 1)", "num_filter": "2", "no_bias": "1"})
    c.inputs = [(x, 0), (w, 0)]
    r = Node("Activation", "r", {"act_type": "relu"})
    r.inputs = [(c, 0)]
    outs = [(r, 0)]
    if second_reader:
        outs.append((c, 0))
    return Symbol(outs)


@pytest.mark.parametrize("second_reader", [False, True])
def test_no_fusion_when_the_value_has_another_reader(second_reader):
    sym = _conv_graph(second_reader)
    fused = fuse_epilogues(sym)
    ops = [n.opname for n in fused.topo() if not n.is_var]
    assert ("Activation" in ops) == second_reader
    x = np.random.default_rng(0).standard_normal((1, 3, 3, 2)).astype(np.float32)
    w = np.random.default_rng(1).standard_normal((2, 2)).astype(np.float32)
    a = run(sym, {"w": w}, {"data": x})
    b = run(fused, {"w": w}, {"data": x})
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)


def test_dense_relu_becomes_hs_dense():
    x = Node("null", "data")
    w, b = Node("null", "w"), Node("null", "b")
    fc = Node("FullyConnected", "fc", {"num_hidden": "3"})
    fc.inputs = [(x, 0), (w, 0), (b, 0)]
    r = Node("Activation", "r", {"act_type": "relu"})
    r.inputs = [(fc, 0)]
    sym = Symbol([(r, 0)])
    fused = fuse_epilogues(sym)
    assert [n.opname for n in fused.topo() if not n.is_var] == ["_hs_dense"]
    rng = np.random.default_rng(0)
    feed = {"w": rng.standard_normal((3, 5)).astype(np.float32),
            "b": rng.standard_normal(3).astype(np.float32)}
    data = {"data": rng.standard_normal((4, 5)).astype(np.float32)}
    for u, v in zip(run(sym, feed, data), run(fused, feed, data, static=True)):
        np.testing.assert_allclose(u, v, rtol=1e-6)


def _numpy_style_net(broadcast_other: bool):
    """conv → (+ residual of the same shape | + a broadcast (1, C, 1, 1) constant) → relu, as
    NumPy-style Gluon code traces it (`_npi_add`)."""
    import framework as mx
    from framework import np as fnp, npx
    from framework.gluon import HybridBlock, nn

    class Block(HybridBlock):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2D(8, 3, padding=1, in_channels=8)
            self.other = nn.Conv2D(8, 1, in_channels=8)

        def forward(self, x):
            y = self.conv(x)
            r = fnp.ones((1, 8, 1, 1)) if broadcast_other else self.other(x)
            return npx.relu(y + r)

    net = Block()
    net.initialize(mx.init.Xavier())
    x = mx.np.array(np.random.default_rng(5).standard_normal((2, 8, 6, 6)).astype("f"))
    ref = net(x).asnumpy()
    net.optimize_for(x, backend="hybridserve", static_alloc=True, static_shape=True)
    got = net(x).asnumpy()
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-5)
    return [n for n in net._cached_graph[1].topo() if not n.is_var]


def test_numpy_style_residual_add_fuses_when_shapes_agree():
    nodes = _numpy_style_net(broadcast_other=False)
    convs = [n for n in nodes if n.opname == "_hs_conv2d"]
    assert sorted((c.parsed.with_sum, c.parsed.act_type) for c in convs) == [
        (False, "none"), (True, "relu")]
    assert not any(n.opname == "_npi_add" for n in nodes)


def test_broadcasting_add_is_not_fused_as_residual():
    nodes = _numpy_style_net(broadcast_other=True)
    assert not any(n.opname == "_hs_conv2d" and n.parsed.with_sum for n in nodes)
