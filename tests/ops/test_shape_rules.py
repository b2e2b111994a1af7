"""Shape rules that follow NumPy's own corner cases (insert's one-index broadcasting, einsum's
implicit output, cross's 2-vectors), each against NumPy on the cases the registry test's single
sample does not reach."""
from __future__ import annotations

import numpy as onp
import pytest

from framework.ops import get_op


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


@pytest.mark.filterwarnings("ignore::DeprecationWarning")     # NumPy 2 deprecates 2-vectors
@pytest.mark.parametrize("shapes, axes", [
    ([(4, 2), (4, 2)], {}),                    # two 2-vectors: a scalar z per row
    ([(2, 4), (4, 3)], {"axisa": 0}),
    ([(5, 3), (1, 3)], {"axisc": 0}),          # broadcast rows, result along axis 0
])
def test_cross_shape_rule_matches_numpy(shapes, axes):
    op = get_op("_npi_cross")
    a = op.parse_attrs(axes)
    ins = [onp.ones(s, onp.float32) for s in shapes]
    assert op.shapes(a, shapes) == [op.kernel(a, *ins).shape]
