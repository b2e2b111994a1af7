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
