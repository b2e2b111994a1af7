"""Passes decide by the operator's registry entry, never by how a node spells it: a graph that
names its ops with 2.x aliases (`_npx_convolution`, `_npx_batch_norm`, `relu`…) takes exactly the
path the canonical spelling takes."""
import numpy as np
import pytest

from framework.base import OperatorError
from framework.compiler.passes.fold_batchnorm import fold_batchnorm
from framework.compiler.passes.layout import to_channels_last
from framework.compiler.passes.simplify import fold_constants, remove_identities
from framework.compiler.plan import Plan
from framework.compiler.typecheck import check_input_dtypes
from framework.ops.groups import OpGroup
from framework.ops.registry import OpDef, get_op
from framework.symbol.graph import Node, Symbol
from framework.symbol.infer import infer_shapes

RNG = np.random.default_rng(0)


def _conv_bn_relu(conv: str, bn: str, relu: str) -> tuple[Symbol, dict]:
    x, w = Node("null", "data"), Node("null", "w")
    c = Node(conv, "c", {"kernel": "(3, 3)", "pad": "(1, 1)", "num_filter": "4", "no_bias": "True"},
             [(x, 0), (w, 0)])
    stats = [Node("null", k) for k in ("g", "b", "m", "v")]
    b = Node(bn, "bn", {"fix_gamma": "False"}, [(c, 0)] + [(s, 0) for s in stats])
    r = Node(relu, "r", {}, [(b, 0)])
    params = {"w": RNG.standard_normal((4, 3, 3, 3)).astype(np.float32),
              "g": RNG.uniform(0.5, 1.5, 4).astype(np.float32),
              "b": RNG.standard_normal(4).astype(np.float32),
              "m": RNG.standard_normal(4).astype(np.float32),
              "v": RNG.uniform(0.5, 1.5, 4).astype(np.float32)}
    return Symbol([(r, 0)]), params


SPELLINGS = [("Convolution", "BatchNorm", "_npx_relu"),
             ("_npx_convolution", "_npx_batch_norm", "relu")]


def _run(sym: Symbol, feed: dict) -> list:
    names = sym.list_inputs()
    return Plan(sym, names).run([feed[n] for n in names])


def _shape(sym: Symbol) -> list[str]:
    return [n.op.name for n in sym.topo() if not n.is_var]


def test_fold_batchnorm_and_layout_take_the_same_path_for_aliases():
    paths = []
    for spelling in SPELLINGS:
        sym, params = _conv_bn_relu(*spelling)
        folded, fparams = fold_batchnorm(sym, params)
        laid, _ = to_channels_last(folded, fparams)
        paths.append((_shape(folded), _shape(laid)))
    assert paths[0] == paths[1]
    assert "BatchNorm" not in paths[0][0]                 # folded in both spellings
    assert "_hs_conv2d" in paths[0][1]


def test_typecheck_refuses_mixed_dtypes_under_any_spelling():
    for fc in ("FullyConnected", "_npx_fully_connected"):
        x, w, b = Node("null", "data"), Node("null", "w"), Node("null", "b")
        sym = Symbol([(Node(fc, "fc", {"num_hidden": "2"}, [(x, 0), (w, 0), (b, 0)]), 0)])
        with pytest.raises(OperatorError, match="fc"):
            check_input_dtypes(sym, {"data": np.dtype("float64"), "w": np.dtype("float32"),
                                     "b": np.dtype("float32")})


@pytest.mark.parametrize("relu", ["relu", "_npx_relu"])
def test_in_place_steps_for_any_spelling(relu):
    x = Node("null", "data")
    a = Node("_npi_multiply_scalar", "m", {"scalar": "2.0"}, [(x, 0)])
    r = Node(relu, "r", {}, [(a, 0)])
    s = Node("_npi_add_scalar", "s", {"scalar": "1.0"}, [(r, 0)])
    plan = Plan(Symbol([(s, 0)]), ["data"])
    _, outs, mem = plan.specialize_plan([np.ones((2, 3), np.float32)])
    assert mem.inplace_steps == [1]
    np.testing.assert_array_equal(outs[0], np.full((2, 3), 3.0, np.float32))


def test_identities_removed_under_any_spelling():
    for name in ("BlockGrad", "stop_gradient", "_npi_stop_gradient", "_copy", "_npi_copy"):
        x = Node("null", "data")
        sym = Symbol([(Node(name, "i", {}, [(x, 0)]), 0)])
        assert [n.name for n in remove_identities(sym).topo()] == ["data"]


def test_random_ops_are_never_folded():
    """An op whose entry says it draws random numbers stays in the graph even when all its
    inputs are constants (the registry has no such op today; an entry stands in for one)."""
    noise = OpDef("_test_noise", lambda a, x: x + 1, random=True)
    z = Node("_npi_zeros", "z", {"shape": "(2,)"})
    n = Node("_test_noise", "n", {}, [(z, 0)], op=noise)
    folded = fold_constants(Symbol([(n, 0)]))
    assert [m.op for m in folded.topo()][-1] is noise
    plain = OpDef("_test_plain", lambda a, x: x + 1)
    p = Node("_test_plain", "p", {}, [(z, 0)], op=plain)
    assert [m.op.name for m in fold_constants(Symbol([(p, 0)])).topo()] == ["_hs_const"]


def test_elemwise_add_is_the_same_shape_add():
    op = get_op("_plus")
    assert op.name == "elemwise_add" and op.name in OpGroup.ADDS & OpGroup.SAME_SHAPE_OPERANDS
    assert get_op("broadcast_add").name in OpGroup.ADDS - OpGroup.SAME_SHAPE_OPERANDS


@pytest.mark.parametrize("kernel,axis,folds", [((3,), -2, True), ((3,), -3, False),
                                               ((3, 3), -3, True), ((3, 3, 3), -3, False),
                                               ((3, 3, 3), -4, True), ((3, 3), 1, True)])
def test_fold_batchnorm_only_on_the_channel_axis(kernel, axis, folds):
    """A negative BatchNorm axis is the channel axis only for the convolution's own rank."""
    x, w = Node("null", "data"), Node("null", "w")
    k = "(" + ", ".join(map(str, kernel)) + ("," if len(kernel) == 1 else "") + ")"
    c = Node("Convolution", "c", {"kernel": k, "num_filter": "3", "no_bias": "True"},
             [(x, 0), (w, 0)])
    stats = [Node("null", s) for s in ("g", "b", "m", "v")]
    bn = Node("BatchNorm", "bn", {"axis": str(axis)}, [(c, 0)] + [(s, 0) for s in stats])
    sym = Symbol([(bn, 0)])
    params = {"w": RNG.standard_normal((3, 3) + kernel).astype(np.float32),
              **{s: RNG.uniform(0.5, 1.5, 3).astype(np.float32) for s in ("g", "b", "m", "v")}}
    folded, fparams = fold_batchnorm(sym, params)
    assert ("BatchNorm" not in _shape(folded)) == folds
    if folds:
        data = RNG.standard_normal((2, 3) + (5,) * len(kernel)).astype(np.float32)
        want = _run(sym, {**params, "data": data})
        got = _run(folded, {**fparams, "data": data})
        np.testing.assert_allclose(got[0], want[0], rtol=1e-4, atol=1e-5)


def test_a_folded_constant_keeps_its_shape_and_dtype_for_inference():
    """`_hs_const` holds its value on the node; its attrs carry the value's shape and dtype, so
    shape and dtype inference after folding need no value (and run no kernel)."""
    z = Node("_npi_zeros", "z", {"shape": "(2, 3)", "dtype": "float16"})
    x = Node("null", "x")
    add = Node("_npi_add", "add", {}, [(z, 0), (x, 0)])
    folded = fold_constants(Symbol([(add, 0)]))
    const = next(n for n in folded.topo() if n.opname == "_hs_const")
    assert const.op.shapes(const.parsed, []) == [(2, 3)]
    assert const.op.dtypes(const.parsed, []) == [np.dtype(np.float16)]
    shapes = infer_shapes(folded, {"x": (2, 3)})
    assert shapes[(id(const), 0)] == (2, 3) and shapes[(id(folded.outputs[0][0]), 0)] == (2, 3)
