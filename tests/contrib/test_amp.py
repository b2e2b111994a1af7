"""`contrib.amp` (bfloat16): the cast operators, the graph rewrite, numerics against float32 on both
engines, and bfloat16 parameters through files (flag 12).

bf16 bound: max|Δ| ≤ 1e-2·max(1, max|ref|) against the float32 network."""
from __future__ import annotations

import json

import numpy as np
import pytest

import framework as mx
from framework import symbol as S
from framework.base import BFLOAT16
from framework.contrib import amp
from framework.ops.groups import OpGroup
from framework.contrib.amp.amp import AMPError
from framework.gluon import SymbolBlock, nn
from framework.io import load_params, save_params
from framework.io.dtypes import bfloat16_to_float32, float32_to_bfloat16
from framework.ops import get_op


def _bound(ref: np.ndarray) -> float:
    return 1e-2 * max(1.0, float(np.abs(ref).max()))


def _run_op(name: str, attrs: dict, *xs):
    op = get_op(name)
    return op.kernel(op.parse_attrs(attrs), *xs)


# -- the operators ----------------------------------------------------------------------------------
def test_amp_cast_to_bfloat16_rounds_to_nearest_even_and_stays_float32():
    ulp = 2.0 ** -7                                   # bfloat16's spacing at 1.0
    x = np.array([1 + ulp / 2, 1 + 1.5 * ulp, 1 + 0.75 * ulp, -3.0, np.inf, np.nan], np.float32)
    y = _run_op("amp_cast", {"dtype": "bfloat16"}, x)
    assert y.dtype == np.float32
    # ties go to the even mantissa: 1+ulp/2 → 1, 1+1.5ulp → 1+2ulp; above half rounds up
    np.testing.assert_array_equal(y[:5], [1.0, 1 + 2 * ulp, 1 + ulp, -3.0, np.inf])
    assert np.isnan(y[5])
    rng = np.random.default_rng(0)
    z = rng.normal(size=1000).astype(np.float32)
    np.testing.assert_array_equal(_run_op("amp_cast", {"dtype": "bfloat16"}, z),
                                  bfloat16_to_float32(float32_to_bfloat16(z)))


def test_amp_cast_leaves_non_floats_and_casts_floats_to_float32():
    i = np.arange(4, dtype=np.int32)
    assert _run_op("amp_cast", {"dtype": "bfloat16"}, i).dtype == np.int32
    assert _run_op("amp_cast", {"dtype": "float32"}, np.ones(3, np.float16)).dtype == np.float32
    op = get_op("amp_cast")
    a = op.parse_attrs({"dtype": "bfloat16"})
    assert op.dtypes(a, [np.dtype(np.float32)]) == [np.float32]      # held as float32
    assert op.dtypes(a, [np.dtype(np.int64)]) == [np.int64]


def test_amp_multicast_gives_floating_inputs_the_widest_or_narrowest_type():
    h, f, i = np.ones(2, np.float16), np.full(2, 1.5, np.float32), np.arange(2)
    outs = _run_op("amp_multicast", {"num_outputs": "3"}, h, f, i)
    assert [o.dtype for o in outs] == [np.float32, np.float32, i.dtype]
    outs = _run_op("amp_multicast", {"num_outputs": "2", "cast_narrow": "True"}, h, f)
    assert [o.dtype for o in outs] == [np.float16, np.float16]


# -- the graph rewrite ------------------------------------------------------------------------------
def _graph():
    """conv → softrelu → (+ a parameter) → flatten → fc → softmax, MXNet 1.x operators."""
    data = S.var("data")
    conv = S.Convolution(data, num_filter=4, kernel=(3, 3), pad=(1, 1), name="conv")
    act = S.Activation(conv, act_type="softrelu", name="act")
    bias = S.var("extra", shape=(1, 4, 6, 6))
    add = S.elemwise_add(act, S.Activation(bias, act_type="relu", name="brelu"), name="add")
    flat = S.Flatten(add, name="flat")
    fc = S.FullyConnected(flat, num_hidden=3, name="fc")
    return S.softmax(fc, name="prob")


def _ops(sym) -> dict[str, tuple]:
    """node name → (op, dtype attr, input names)"""
    g = json.loads(sym.tojson(remove_amp_cast=False))
    ns = g["nodes"]
    return {n["name"]: (n["op"], (n.get("attrs") or {}).get("dtype"),
                        [ns[i[0]]["name"] for i in n["inputs"]]) for n in ns if n["op"] != "null"}


def test_convert_symbol_inserts_casts_where_mxnet_does():
    ops = _ops(amp.convert_symbol(_graph(), "bfloat16", data_names=["data", "extra"]))
    # target op: data and parameters cast to bfloat16
    assert ops["conv"][2] == ["data_amp_cast_bfloat16", "conv_weight_amp_cast_bfloat16",
                              "conv_bias_amp_cast_bfloat16"]
    assert ops["data_amp_cast_bfloat16"][:2] == ("amp_cast", "bfloat16")
    # conditional float32 (softrelu): its input back to float32, named after the output
    assert ops["act"][2] == ["conv_output_amp_cast_float32"]
    # widest-type add: `brelu` has no known type, so one amp_multicast decides at run time
    assert ops["add"][2] == ["act_output_amp_multicast"] * 2
    assert ops["act_output_amp_multicast"][0] == "amp_multicast"
    # float32 op after an op of unknown type: cast to float32
    assert ops["flat"][2] == ["add_output_amp_cast_float32"]
    assert ops["fc"][2][0] == "flat_0_amp_cast_bfloat16"    # Flatten names no outputs: _0
    # softmax is float32; the graph output already is, so no final cast
    assert ops["prob"][2] == ["fc_output_amp_cast_float32"]
    assert sum(op == "amp_cast" for op, _, _ in ops.values()) == 9


def test_excluded_names_and_overridden_lists():
    ops = _ops(amp.convert_symbol(_graph(), "bfloat16", data_names=["data", "extra"],
                                  excluded_sym_names=["conv"]))
    assert ops["conv"][2] == ["data", "conv_weight", "conv_bias"]     # stays float32
    ops = _ops(amp.convert_symbol(_graph(), "bfloat16", data_names=["data", "extra"],
                                  conditional_fp32_ops=[]))
    assert ops["act"][2] == ["conv"]                                   # softrelu now flows


def test_cast_optional_params_stores_parameters_in_bfloat16():
    new = amp.convert_symbol(_graph(), "bfloat16", data_names=["data", "extra"],
                             cast_optional_params=True)
    assert _ops(new)["conv"][2] == ["data_amp_cast_bfloat16", "conv_weight", "conv_bias"]
    attrs = new.attr_dict()
    assert attrs["conv_weight"]["__dtype__"] == "12" and attrs["fc_bias"]["__dtype__"] == "12"
    assert "__dtype__" not in attrs.get("extra", {})


@pytest.mark.parametrize("kw, msg", [
    (dict(target_dtype="float16"), "bfloat16"),
    (dict(target_dtype_ops=["Convolution"], fp32_ops=["Convolution"]), "two lists"),
    (dict(fp32_ops=["NoSuchOp"]), "NoSuchOp"),
    (dict(conditional_fp32_ops=[("Activation", "act_type")]), "conditional_fp32_ops"),
    (dict(excluded_sym_names="conv"), "excluded_sym_names"),
])
def test_bad_arguments_raise_amp_error(kw, msg):
    kw.setdefault("target_dtype", "bfloat16")
    with pytest.raises(AMPError, match=msg):
        amp.convert_symbol(_graph(), **kw)


def test_convert_model_converts_only_the_parameters_the_graph_stores_in_bfloat16():
    rng = np.random.default_rng(1)
    args = {"conv_weight": rng.normal(size=(4, 3, 3, 3)).astype(np.float32),
            "conv_bias": np.zeros(4, np.float32),
            "fc_weight": rng.normal(size=(3, 144)).astype(np.float32),
            "fc_bias": np.zeros(3, np.float32), "extra": np.zeros((1, 4, 6, 6), np.float32)}
    sym, a, aux = amp.convert_model(_graph(), dict(args), {}, "bfloat16",
                                    cast_optional_params=True)
    assert aux == {} and a["extra"].dtype == np.float32
    w = np.asarray(a["conv_weight"]._data)
    assert w.dtype == BFLOAT16
    np.testing.assert_array_equal(w, float32_to_bfloat16(args["conv_weight"]))


def test_amp_names_and_lists_follow_mxnet():
    assert amp.bfloat16 == BFLOAT16 == mx.np.bfloat16
    assert amp.list_lp16_ops("bfloat16") == ["Convolution", "FullyConnected"]
    fp32, widest = set(amp.list_fp32_ops("bfloat16")), set(amp.list_widest_type_cast("bfloat16"))
    assert {"softmax", "Flatten", "exp", "LayerNorm", "broadcast_mul"} <= fp32
    assert {"elemwise_add", "broadcast_add", "Concat"} & widest == {"elemwise_add", "broadcast_add"}
    assert not fp32 & widest and "Pooling" in amp.list_lp16_fp32_ops("bfloat16")
    amp.init("bfloat16")


# -- numerics and files -----------------------------------------------------------------------------
def _net():
    net = nn.HybridSequential()
    net.add(nn.Conv2D(8, 3, padding=1), nn.BatchNorm(), nn.Activation("relu"), nn.MaxPool2D(),
            nn.Conv2D(8, 3, padding=1, activation="relu"), nn.Flatten(), nn.Dense(10))
    net.initialize(mx.init.Xavier())
    return net


@pytest.fixture(scope="module")
def converted():
    x = np.random.default_rng(0).normal(size=(2, 3, 8, 8)).astype(np.float32)
    net = _net()
    net.hybridize(backend="numpy")
    ref = net(mx.np.array(x)).asnumpy()
    return net, x, ref


@pytest.mark.parametrize("cast_params", [False, True])
def test_bfloat16_network_matches_float32_within_the_bound_on_both_engines(converted, cast_params):
    net, x, ref = converted
    block = amp.convert_hybrid_block(net, "bfloat16", cast_optional_params=cast_params)
    block.hybridize(backend="numpy")
    y = block(mx.np.array(x)).asnumpy()
    err = np.abs(y - ref).max()
    assert 0 < err <= _bound(ref)              # rounded (not float32), within bf16's bound
    ort = amp.convert_hybrid_block(net, "bfloat16", cast_optional_params=cast_params)
    ort.optimize_for(mx.np.array(x), backend="onnxruntime")
    assert ort._cached_graph[1].topo()[-1].op.name in OpGroup.RUNS_SUBGRAPH       # ORT ran the casts
    np.testing.assert_allclose(ort(mx.np.array(x)).asnumpy(), y, rtol=0, atol=_bound(ref) / 10)


@pytest.mark.parametrize("fmt", ["2.x", "1.x"])
def test_bfloat16_parameters_round_trip_with_flag_12(converted, tmp_path, fmt):
    net, x, ref = converted
    block = amp.convert_hybrid_block(net, "bfloat16", cast_optional_params=True)
    block.hybridize(backend="numpy")
    y = block(mx.np.array(x)).asnumpy()
    sym_file, params_file = block.export(str(tmp_path / "m"), format=fmt, remove_amp_cast=False)
    saved = load_params(params_file)
    low = {k for k, v in saved.items() if v.dtype == BFLOAT16}
    assert low == {"arg:0.weight", "arg:0.bias", "arg:4.weight", "arg:4.bias", "arg:6.weight",
                   "arg:6.bias"}
    held = block.collect_params()["0.weight"].data().asnumpy()
    np.testing.assert_array_equal(bfloat16_to_float32(saved["arg:0.weight"]), held)
    again = SymbolBlock.imports(sym_file, ["data"], params_file)
    again.hybridize(backend="numpy")
    np.testing.assert_array_equal(again(mx.np.array(x)).asnumpy(), y)
    _, params2 = again.export(str(tmp_path / "again"), format=fmt)
    resaved = load_params(params2)
    for k in low:
        assert resaved[k].dtype == BFLOAT16 and resaved[k].tobytes() == saved[k].tobytes()
    # MXNet's default export drops the casts: bfloat16 weights, float32 activations
    plain_sym, plain_params = block.export(str(tmp_path / "plain"), format=fmt)
    plain = SymbolBlock.imports(plain_sym, ["data"], plain_params)
    assert np.abs(plain(mx.np.array(x)).asnumpy() - ref).max() <= _bound(ref)


def test_astype_bfloat16_rounds_and_file_bfloat16_widens_exactly(tmp_path):
    x = np.array([1.001, -2.0, 3.14159, 1e-3], np.float32)
    y = mx.np.array(x).astype(mx.np.bfloat16)
    assert y.dtype == np.float32                       # held as float32, bfloat16 values
    np.testing.assert_array_equal(y.asnumpy(), bfloat16_to_float32(float32_to_bfloat16(x)))
    save_params(str(tmp_path / "b.params"), {"w": float32_to_bfloat16(x)}, format="legacy")
    w = mx.npx.load(str(tmp_path / "b.params"))["w"]
    assert w.dtype == BFLOAT16                         # as the file stores it
    np.testing.assert_array_equal(w.astype("float32").asnumpy(), y.asnumpy())


def test_cast_to_bfloat16_in_a_graph_runs_on_ort_as_on_numpy():
    data = S.var("data")
    sym = S.FullyConnected(S.Cast(data, dtype="bfloat16"), num_hidden=4, no_bias=True, name="fc")
    w = np.random.default_rng(3).normal(size=(4, 6)).astype(np.float32)
    x = mx.np.array(np.random.default_rng(4).normal(size=(2, 6)).astype(np.float32))
    outs = []
    for backend in ("numpy", "onnxruntime"):
        net = SymbolBlock(sym, [S.var("data", dtype="float32")])
        net.load_dict({"fc_weight": w})
        if backend == "numpy":
            net.hybridize(backend="numpy")
        else:
            net.optimize_for(x, backend="onnxruntime")
            assert net._cached_graph[1].topo()[-1].op.name in OpGroup.RUNS_SUBGRAPH
        outs.append(net(x).asnumpy())
    xb = bfloat16_to_float32(float32_to_bfloat16(x.asnumpy()))
    np.testing.assert_allclose(outs[0], xb @ w.T, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-5, atol=1e-6)


def test_save_parameters_keeps_bfloat16_parameters_bfloat16(converted, tmp_path):
    net, x, _ = converted
    block = amp.convert_hybrid_block(net, "bfloat16", cast_optional_params=True)
    block.save_parameters(str(tmp_path / "p.params"))
    saved = load_params(str(tmp_path / "p.params"))
    assert saved["0.weight"].dtype == BFLOAT16 and saved["1.gamma"].dtype == np.float32
    again = amp.convert_hybrid_block(net, "bfloat16", cast_optional_params=True)
    again.load_parameters(str(tmp_path / "p.params"))
    w = again.collect_params()["0.weight"]
    assert w._bf16
    np.testing.assert_array_equal(w.data().asnumpy(), bfloat16_to_float32(saved["0.weight"]))
