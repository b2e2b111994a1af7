"""Ops whose output shapes depend on the input values (unique, nonzero, boolean_mask…) leave
those shapes unknown in graph shape inference, and so does everything computed from them; the
shapes that do not depend on them stay known. Nothing runs a kernel to guess a shape."""
from __future__ import annotations

import numpy as onp
import pytest

import framework as mx
from framework.ops import get_op
from framework.ops.registry import DataDependentShape
from framework.symbol.infer import infer_shapes


def test_unique_and_nonzero_shapes_are_unknown_not_guessed():
    x = mx.sym.var("x")
    uniq, nz = mx.sym.np.unique(x), mx.sym.npx.nonzero(x)
    for out, shape in ((uniq, (10,)), (nz, (4, 5))):
        assert out.infer_shape(x=shape) == (None, None, None)
        args, outs, _ = out.infer_shape_partial(x=shape)
        assert args == [shape] and outs == [()]


def test_what_follows_a_data_dependent_op_is_unknown_and_the_rest_known():
    x = mx.sym.var("x")
    before = mx.sym.np.exp(x)
    after = mx.sym.np.sum(mx.sym.npx.nonzero(before) * 2)
    shapes = infer_shapes(mx.sym.Group([before, after]), {"x": (4, 5)})
    by_name = {n.name: shapes[(id(n), 0)] for n in after.topo() if not n.is_var}
    assert shapes[(id(before.outputs[0][0]), 0)] == (4, 5)
    assert [s for name, s in by_name.items() if name != before.name] == [None] * (len(by_name) - 1)


def test_delete_by_an_index_tensor_depends_on_data_and_by_a_slice_does_not():
    op = get_op("_npi_delete")
    by_tensor, by_slice = op.parse_attrs({"axis": 0}), op.parse_attrs({"start": 0, "stop": 2})
    with pytest.raises(DataDependentShape, match="_npi_delete"):
        op.shapes(by_tensor, [(5,), (2,)])
    # repeated indices delete once: the values, not the shapes, decide
    assert op.kernel(by_tensor, onp.arange(5.0), onp.array([1, 1])).shape == (4,)
    assert op.shapes(by_slice, [(5, 2)]) == [op.kernel(by_slice, onp.zeros((5, 2))).shape] == [(8,)]


@pytest.mark.parametrize("attrs, shapes, values, obj", [
    ({"int_ind": 1, "axis": 0}, [(2, 3), (2, 3)], (2, 3), None),      # one index: values' dim 0
    ({"axis": 0}, [(2, 3), (1, 3), ()], (1, 3), onp.array(1)),         # a 0-d index tensor
    ({"axis": 0}, [(2, 3), (1, 3), (1,)], (1, 3), onp.array([1])),     # one index in a vector
    ({"start": 0, "stop": 3}, [(2, 3), (3,)], (3,), None),             # flat, a slice of three
])
def test_insert_shapes_follow_numpy(attrs, shapes, values, obj):
    name = "_npi_insert_tensor" if obj is not None else \
        "_npi_insert_scalar" if "int_ind" in attrs else "_npi_insert_slice"
    op = get_op(name)
    a = op.parse_attrs(attrs)
    ins = [onp.zeros(shapes[0], onp.float32), onp.ones(values, onp.float32)]
    ins += [obj] if obj is not None else []
    assert op.shapes(a, shapes) == [op.kernel(a, *ins).shape]


@pytest.mark.parametrize("subscripts, shapes", [
    ("ij,jk->ki", [(2, 3), (3, 4)]),
    ("...i,...i", [(2, 1, 3), (4, 3)]),      # implicit output, broadcast ellipsis
    ("ii", [(3, 3)]),                         # trace: a scalar
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
])
def test_einsum_shape_rule_matches_numpy(subscripts, shapes):
    op = get_op("_npi_einsum")
    a = op.parse_attrs({"num_args": len(shapes), "subscripts": subscripts})
    ins = [onp.ones(s, onp.float32) for s in shapes]
    assert op.shapes(a, shapes) == [onp.einsum(subscripts, *ins).shape]
