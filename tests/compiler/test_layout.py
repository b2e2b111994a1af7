"""Channels-last layout pass (passes/layout.py): outputs unchanged on the fixture zoo models, the
2-D convolutions become `_hs_conv2d` with NHWC values in between, NCHW comes back only where a
consumer needs it, and the rewritten graph exports and reloads."""
import numpy as np
import pytest

from fixture_util import load_fixture
from framework.compiler import Plan
from framework.compiler.backends import get_backend
from framework.compiler.passes.fold_batchnorm import fold_batchnorm
from framework.compiler.passes.layout import to_channels_last
from framework.ops import parallel
from framework.symbol import load_json

ZOO = ["mini_resnet_v1", "mini_resnet_v1_bottleneck", "mini_resnet_v2_bottleneck",
       "mini_mobilenet_v1", "mini_mobilenet_v2", "mini_densenet", "mini_inception",
       "mini_vgg_alexnet", "mini_squeezenet", "conv2d_variants", "pool2d_variants",
       "batchnorm_variants", "fc_flatten", "conv1d_pool1d", "conv3d_pool3d", "deconv2d"]


def run(sym, params, inputs, static=False):
    names = sym.list_inputs()
    feed = {**params, **inputs}
    args = [np.asarray(feed[n]) for n in names]
    plan = Plan(sym, names)
    if static:
        fn = plan.specialize(args)
        fn(*args)
        return fn(*args)
    return plan.run(args)


def check(outs, expected):
    assert len(outs) == len(expected)
    for o, e in zip(outs, expected):
        np.testing.assert_allclose(o, e, rtol=1e-4, atol=1e-5)


def available(name):
    return load_fixture("mxnet-1.9.1", name)


@pytest.mark.parametrize("name", ZOO)
def test_layout_keeps_outputs(name):
    sym, params, inputs, expected = available(name)
    new, nparams = to_channels_last(sym, params)
    check(run(new, nparams, inputs), expected)
    check(run(new, nparams, inputs, static=True), expected)
    # after BatchNorm folding too (the pipeline's order)
    folded, fparams = fold_batchnorm(sym, params)
    new, nparams = to_channels_last(folded, fparams)
    check(run(new, nparams, inputs), expected)


@pytest.mark.parametrize("name", ZOO)
def test_pipeline_with_intra_op_threads(name, monkeypatch):
    from framework.ops._kernels import nhwc_util
    sym, params, inputs, expected = available(name)
    new, a, x = get_backend("hybridserve")(sym, params, {})
    monkeypatch.setattr(nhwc_util, "_MIN_PAR", 1)
    prev = parallel.set_intra_op_threads(2)
    try:
        check(run(new, {**a, **x}, inputs, static=True), expected)
    finally:
        parallel.set_intra_op_threads(prev)


def test_convs_become_channels_last():
    sym, params, inputs, expected = available("mini_resnet_v1_bottleneck")
    folded, fparams = fold_batchnorm(sym, params)
    new, nparams = to_channels_last(folded, fparams)
    ops = [n.opname for n in new.topo() if not n.is_var]
    assert "Convolution" not in ops and ops.count("_hs_conv2d") > 5
    # NHWC flows from the first conv to the global pool: no transposes in between
    assert ops.count("_npi_transpose") <= 1
    first = next(n for n in new.topo() if n.opname == "_hs_conv2d")
    assert first.parsed.data_layout == "NCHW"          # reads the graph input directly
    pools = [n for n in new.topo() if n.opname == "Pooling"]
    assert pools and all(p.parsed.layout == "NHWC" for p in pools)
    # the weights were rewritten once into the GEMM layout, the originals are gone — except
    # the 1x1 convolutions', which are read as transposed views ("gemm1x1")
    shared = {n.inputs[1][0].name for n in new.topo()
              if n.opname == "_hs_conv2d" and n.parsed.algo == "gemm1x1"}
    assert shared
    assert all(nparams[k] is fparams[k] and fparams[k].shape[2:] == (1, 1) for k in shared)
    assert not any(k.endswith("_weight") and not k.endswith(("_hs_weight", "fc1_weight"))
                   and k not in shared and k in nparams and nparams[k].ndim == 4
                   for k in nparams)


def test_hybridserve_backend_shares_1x1_weights_and_scales_their_batchnorm():
    """The default pipeline leaves BatchNorm after a 1x1 conv unfolded until the layout pass, which
    turns it into the conv's per-channel `scale`: the graph holds no copy of that weight."""
    sym, params, inputs, expected = available("mini_resnet_v1_bottleneck")
    args = {k: v for k, v in params.items() if k not in set(sym.list_auxiliary_states())}
    aux = {k: v for k, v in params.items() if k not in args}
    new, a, x = get_backend("hybridserve")(sym, args, aux)
    ops = [n for n in new.topo() if not n.is_var]
    assert not any(n.opname in ("BatchNorm", "_hs_affine") for n in ops)
    ones = [n for n in ops if n.opname == "_hs_conv2d" and n.parsed.algo == "gemm1x1"]
    assert ones and all(n.parsed.with_scale for n in ones)
    for n in ones:
        assert a[n.inputs[1][0].name] is params[n.inputs[1][0].name]
    check(run(new, {**a, **x}, inputs), expected)
    check(run(new, {**a, **x}, inputs, static=True), expected)


def test_unfoldable_batchnorm_becomes_affine():
    sym, params, inputs, expected = available("mini_resnet_v2_bottleneck")
    new, nparams = to_channels_last(sym, params)
    ops = [n.opname for n in new.topo() if not n.is_var]
    assert "BatchNorm" not in ops and "_hs_affine" in ops


def test_graph_output_and_unknown_consumer_get_nchw_back():
    sym, params, inputs, expected = available("mini_vgg_alexnet")
    new, nparams = to_channels_last(sym, params)
    trans = [n for n in new.topo() if n.opname == "_npi_transpose"]
    assert trans and all(n.parsed.axes == (0, 3, 1, 2) for n in trans)
    check(run(new, nparams, inputs), expected)


@pytest.mark.parametrize("name", ["mini_resnet_v1", "mini_densenet", "mini_mobilenet_v2"])
def test_channels_last_backend_exports(name):
    sym, params, inputs, expected = available(name)
    new, a, x = get_backend("hybridserve")(sym, params, {})
    again = load_json(new.tojson())
    check(run(again, {**a, **x}, inputs), expected)


def test_multi_output_elementwise_keeps_its_outputs():
    """LeakyReLU(rrelu) has a second (mask) output: both come back, in NCHW."""
    from framework.symbol.graph import Node, Symbol
    rng = np.random.default_rng(3)
    x, w = Node("null", "data"), Node("null", "w")
    c = Node("Convolution", "c", {"kernel": "(3, 3)", "pad": "(1, 1)", "num_filter": "4",
                                  "no_bias": "True"})
    c.inputs = [(x, 0), (w, 0)]
    r = Node("LeakyReLU", "r", {"act_type": "rrelu"})
    r.inputs = [(c, 0)]
    sym = Symbol([(r, 0), (r, 1)])
    params = {"w": rng.standard_normal((4, 3, 3, 3)).astype(np.float32)}
    inputs = {"data": rng.standard_normal((2, 3, 5, 6)).astype(np.float32)}
    new, nparams = to_channels_last(sym, params)
    assert any(n.opname == "_hs_conv2d" for n in new.topo())
    check(run(new, nparams, inputs), run(sym, params, inputs))


def test_example_shapes_pick_winograd_and_keep_only_its_weight(monkeypatch):
    """With the example input's shape (optimize_for passes it), wide 3x3 convolutions become
    Winograd: the graph holds the transformed weight only, and the output is unchanged."""
    import framework as mx
    from framework.gluon import nn
    net = nn.HybridSequential()
    net.add(nn.Conv2D(64, 3, padding=1, in_channels=64, activation="relu"),
            nn.Conv2D(64, 3, padding=1, in_channels=64), nn.Conv2D(8, 3, padding=1))
    net.initialize(mx.init.Xavier())
    x = mx.np.array(np.random.default_rng(3).standard_normal((1, 64, 16, 16)).astype("f"))
    ref = net(x).asnumpy()
    net.optimize_for(x, backend="hybridserve", static_alloc=True, static_shape=True)
    got = net(x).asnumpy()
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-5 * np.abs(ref).max())
    convs = [n for n in net._cached_graph[1].topo() if n.opname == "_hs_conv2d"]
    # the first reads the NCHW graph input (im2col does the layout change); few filters: "shift"
    assert [n.attrs["algo"] for n in convs] == ["gemm", "winograd", "shift"]
    held = {name: v for is_data, name, v in net._cached_op_args if not is_data}
    assert held[convs[1].inputs[1][0].name].shape == (16, 64, 64)      # only the 4x4 kernels


def test_without_example_shapes_the_algorithm_is_chosen_per_call():
    sym, params, inputs, expected = available("conv2d_variants")
    new, _ = to_channels_last(sym, params)
    assert all(n.attrs.get("algo") in ("gemm", "gemm1x1", "shift") for n in new.topo()
               if n.opname == "_hs_conv2d")


def test_optimized_block_with_shared_1x1_weight_exports_and_reloads(tmp_path):
    """optimize_for + export writes the 1x1 conv's own weight and its BatchNorm scale; the
    exported graph reloads through SymbolBlock.imports and gives the same output."""
    import json

    import framework as mx
    from framework.gluon import SymbolBlock, nn
    net = nn.HybridSequential()
    net.add(nn.Conv2D(32, 3, padding=1, in_channels=8), nn.Activation("relu"),
            nn.Conv2D(16, 1, strides=2, use_bias=False, in_channels=32),
            nn.BatchNorm(in_channels=16), nn.Activation("relu"))
    net.initialize(mx.init.Xavier())
    rng = np.random.default_rng(5)
    for p in net.collect_params().values():
        if p.name.endswith(("gamma", "beta", "running_mean", "running_var")):
            p.set_data(mx.np.array(rng.uniform(0.5, 1.5, p.shape).astype("f")))
    x = mx.np.array(rng.standard_normal((2, 8, 9, 9)).astype("f"))
    ref = net(x).asnumpy()
    net.optimize_for(x, backend="hybridserve", static_alloc=True, static_shape=True)
    np.testing.assert_allclose(net(x).asnumpy(), ref, rtol=1e-4, atol=1e-5)
    net.export(str(tmp_path / "m"))
    nodes = json.loads((tmp_path / "m-symbol.json").read_text())["nodes"]
    ones = [n for n in nodes if n["op"] == "_hs_conv2d" and n["attrs"]["algo"] == "gemm1x1"]
    assert len(ones) == 1 and ones[0]["attrs"]["with_scale"] == "1"
    back = SymbolBlock.imports(str(tmp_path / "m-symbol.json"), ["data"],
                               str(tmp_path / "m-0000.params"))
    np.testing.assert_allclose(back(x).asnumpy(), ref, rtol=1e-4, atol=1e-5)


def test_float16_graphs_keep_im2col():
    """Winograd is chosen for float32/float64 weights only: float16 keeps im2col (and stays
    within float16 precision of the plain graph)."""
    import framework as mx
    from framework.gluon import nn
    net = nn.HybridSequential()
    net.add(nn.Conv2D(64, 3, padding=1, in_channels=64, activation="relu"),
            nn.Conv2D(64, 3, padding=1, in_channels=64))
    net.initialize(mx.init.Xavier())
    net.cast("float16")
    x = mx.np.array(np.random.default_rng(2).random((1, 64, 16, 16)), dtype="float16")
    ref = net(x).asnumpy().astype(np.float32)
    net.optimize_for(x, backend="hybridserve", static_alloc=True, static_shape=True)
    got = net(x).asnumpy()
    assert got.dtype == np.float16
    np.testing.assert_allclose(got.astype(np.float32), ref, rtol=5e-3, atol=5e-3)
    algos = {n.parsed.algo for n in net._cached_graph[1].topo() if n.opname == "_hs_conv2d"}
    assert algos == {"gemm"}
