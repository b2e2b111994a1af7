"""SymbolBlock: imports of real MXNet exports, feature extraction, composition (GLUON_SEMANTICS §5,
MXNET_FORMATS §5.3, §7)."""
import warnings

import numpy as onp
import pytest

import framework as mx
from framework import np
from framework.gluon import HybridBlock, SymbolBlock, nn
from framework.io import load_params, strip_prefixes
from framework.symbol.graph import Symbol, _Symbol
from framework.symbol.json_io import load_json
from fixture_util import FIXTURES

_TYPE_WARNING = ("Cannot decide type for the following arguments. Consider providing them as "
                 "input:\n\tdata: None")


def _net():
    net = nn.HybridSequential()
    net.add(nn.Dense(4, activation="relu"), nn.BatchNorm(), nn.Dense(2))
    net.initialize()
    net(_x(1, 5))                                   # finish deferred init
    for p in net.collect_params().values():
        if p.name in ("running_mean", "running_var", "gamma", "beta"):
            p.set_data(np.array(onp.random.default_rng(3).uniform(0.5, 1.5, p.shape).astype("float32")))
    net.hybridize()
    return net


def _x(*shape, seed=0):
    return np.array(onp.random.default_rng(seed).uniform(-1, 1, shape).astype("float32"))


@pytest.mark.parametrize("version,name", [("mxnet-2.0.0b1", "mlp_hybrid"), ("mxnet-2.0.0b1", "lenet"),
                                          ("mxnet-1.9.1", "mini_resnet_v1")])
def test_imports_real_mxnet_exports(version, name):
    d = FIXTURES / version
    io = onp.load(d / f"{name}-io.npz")
    with warnings.catch_warnings():
        warnings.simplefilter("error")    # types come from the params file: no warning (issue 18)
        net = SymbolBlock.imports(str(d / f"{name}-symbol.json"), ["data"], str(d / f"{name}-0000.params"))
    out = net(np.array(io["data"]))
    onp.testing.assert_allclose(out.asnumpy(), io["output"], rtol=1e-4, atol=1e-5)
    assert all(p.shape is None for p in net.collect_params().values())     # stays None (2.x)
    assert repr(net).startswith("SymbolBlock(\n<_Symbol ") and repr(net).endswith(" : 1 -> 1\n)")



@pytest.mark.parametrize("version,name", [("mxnet-2.0.0b1", "lenet"), ("mxnet-1.9.1", "mini_resnet_v1")])
def test_from_graph_is_imports_from_memory(version, name):
    """A graph and named arrays parsed once (as the server does, under size limits) make the
    same block as `imports` reading both files; parameters keep their saved dtypes."""
    d = FIXTURES / version
    io = onp.load(d / f"{name}-io.npz")
    sym = load_json((d / f"{name}-symbol.json").read_bytes())
    params = strip_prefixes(load_params(d / f"{name}-0000.params"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")    # dtypes come from the params: nothing to act on, no warning
        net = SymbolBlock.from_graph(sym, "data", params)
    onp.testing.assert_allclose(net(np.array(io["data"])).asnumpy(), io["output"], rtol=1e-4,
                                atol=1e-5)
    assert {k: p.data().dtype for k, p in net.collect_params().items()} == {
        k: v.dtype for k, v in params.items()}
    with pytest.raises(AssertionError, match="is missing in 'param_dict'"):
        SymbolBlock.from_graph(sym, "data", dict(list(params.items())[1:]))

def test_imports_without_params_file_infers_shapes_on_first_call(tmp_path):
    net = _net()
    x = _x(3, 5)
    net(x)
    sym_file, _ = net.export(str(tmp_path / "m"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")           # typed input: no "Cannot decide type" warning
        sb = SymbolBlock.imports(sym_file, "data")
    assert list(sb.collect_params()) == ["0.weight", "0.bias", "1.gamma", "1.beta", "2.weight",
                                         "2.bias", "1.running_mean", "1.running_var"]
    assert sb.params["1.running_var"].grad_req == "null"
    sb.initialize(mx.init.One())        # no init attrs are taken from the graph (as MXNet)
    assert sb(x).shape == (3, 2)
    assert sb.params["0.weight"].shape == (4, 5)


def test_feature_extraction_recipe_via_export_none():
    net = _net()
    x = _x(3, 5)
    net(x)
    sym, args = net.export(None)
    assert isinstance(sym, _Symbol) and set(args) == {
        "arg:0.weight", "arg:0.bias", "arg:1.gamma", "arg:1.beta", "aux:1.running_mean",
        "aux:1.running_var", "arg:2.weight", "arg:2.bias"}
    internals = sym.get_internals()
    assert type(internals) is Symbol
    names = internals.list_outputs()
    act = names[names.index("0.bias") + 2]               # FullyConnected, then Activation
    data = mx.sym.var("data").as_np_ndarray()
    with pytest.warns(UserWarning) as rec:    # no params given: typing the input is the user's call
        feat = SymbolBlock([internals[act], internals[names[-1]]], data)
    assert [str(r.message) for r in rec] == [_TYPE_WARNING]
    feat.load_dict(args, ignore_extra=True)
    hidden, out = feat(x)
    want = npx_relu(x, net[0])
    onp.testing.assert_allclose(hidden.asnumpy(), want, rtol=1e-5, atol=1e-6)
    onp.testing.assert_allclose(out.asnumpy(), net(x).asnumpy(), rtol=1e-5, atol=1e-6)
    assert repr(feat).startswith("SymbolBlock(\n<Symbol group [node_") and repr(feat).endswith(": 1 -> 2\n)")
    with pytest.raises(ValueError, match="params are unused by the model."):
        SymbolBlock(internals[act], data, params=net.collect_params())


def npx_relu(x, dense):
    w, b = dense.weight.data().asnumpy(), dense.bias.data().asnumpy()
    return onp.maximum(x.asnumpy() @ w.T + b, 0)


def test_construction_errors_and_param_sharing():
    a = mx.sym.var("a")
    fc = mx.sym.FullyConnected(a, num_hidden=2, name="fc")
    with pytest.raises(AssertionError, match="Input symbols must be variable, but <Symbol fc> is "
                                             "an output of operators"):
        SymbolBlock(fc, fc)
    with pytest.warns(UserWarning):
        sb = SymbolBlock(fc, a)
    assert list(sb.collect_params()) == ["fc_weight", "fc_bias"]
    w = mx.gluon.Parameter("w", shape=(2, 3))
    with pytest.warns(UserWarning):
        shared = SymbolBlock(fc, a, params={"fc_weight": w})
    assert shared.params["fc_weight"] is w and w.var_name() == "fc_weight"
    w.initialize()
    shared.params["fc_bias"].initialize()
    assert shared(_x(4, 3)).shape == (4, 2)


def test_symbol_inputs_compose_and_errors_inside_hybrid_block():
    net = _net()
    net(_x(2, 5))
    sym, args = net.export(None)
    with pytest.warns(UserWarning):
        sb = SymbolBlock(sym, mx.sym.var("data").as_np_ndarray())
    composed = sb(mx.sym.var("other"))
    assert composed.list_inputs()[0] == "other"
    with pytest.raises(AssertionError, match="HybridBlock requires the first argument to forward be"):
        sb(3)
    sb.load_dict(args)

    class Outer(HybridBlock):
        def __init__(self):
            super().__init__()
            self.inner = sb

        def forward(self, x):
            return self.inner(x)

    outer = Outer()
    outer.hybridize()
    with pytest.raises(RuntimeError, match="Calling a SymbolBlock from within HybridBlock is not "
                                           "yet supported in Gluon 2."):
        outer(_x(2, 5))


def test_cast_float16_keeps_batchnorm_float32(tmp_path):
    net = _net()
    net(_x(2, 5))
    f = net.export(str(tmp_path / "bn"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sb = SymbolBlock.imports(f[0], ["data"], f[1])
    sb.cast("float16")
    dt = {k: onp.dtype(p.dtype).name for k, p in sb.collect_params().items()}
    assert dt["0.weight"] == "float16" and dt["1.running_var"] == "float32"
    assert dt["1.gamma"] == dt["1.beta"] == dt["1.running_mean"] == "float32"


def test_hooks_get_list_of_inputs():
    net = _net()
    net(_x(2, 5))
    sym, args = net.export(None)
    with pytest.warns(UserWarning):
        sb = SymbolBlock(sym, mx.sym.var("data").as_np_ndarray())
    sb.load_dict(args)
    seen = []
    sb.register_forward_pre_hook(lambda b, inp: seen.append(type(inp).__name__))
    sb(_x(2, 5))
    sb(_x(2, 5))
    assert seen == ["list", "list"]
