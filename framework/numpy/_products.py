"""dot, matmul, tensordot, einsum, inner, outer, vdot of `framework.np`."""
from __future__ import annotations

import numpy as _onp

from ..ndarray import ndarray
from ..frontend import op as _op
from ._base import as_nd, invoke, is_scalar
from ._math import multiply
from ._shape import ravel

__all__ = ["dot", "matmul", "tensordot", "einsum", "inner", "outer", "vdot", "kron", "cross",
           "polyval"]


def dot(a, b, out=None):
    """NumPy dot (the `np.dot` op; a scalar operand multiplies)."""
    if is_scalar(a) or is_scalar(b):
        return multiply(a, b, out=out)
    res = invoke(_op("np.dot"), [as_nd(a), as_nd(b)])
    if out is not None:
        out._data[...] = res._data
        return out
    return res


def matmul(a, b, out=None, **kw):
    res = invoke(_op("np.matmul"), [as_nd(a), as_nd(b)])
    if out is not None:
        out._data[...] = res._data
        return out
    return res


def tensordot(a, b, axes=2):
    """The `np.tensordot` op (axis lists), or its `int_axes` form (an int)."""
    a, b = as_nd(a), as_nd(b)
    if isinstance(axes, (int, _onp.integer)):
        return invoke(_op("np.tensordot:int_axes"), [a, b], {"axes": int(axes)})
    xa, ya = axes
    xa = (xa,) if isinstance(xa, int) else tuple(xa)
    ya = (ya,) if isinstance(ya, int) else tuple(ya)
    return invoke(_op("np.tensordot"), [a, b], {"a_axes_summed": xa, "b_axes_summed": ya})


def einsum(*operands, **kwargs):
    subscripts, arrs = operands[0], [as_nd(x) for x in operands[1:]]
    optimize = kwargs.get("optimize", False)
    return invoke(_op("np.einsum"), arrs, {"subscripts": subscripts, "num_args": len(arrs),
                                           "optimize": int(bool(optimize))})


def inner(a, b):
    a, b = as_nd(a), as_nd(b)
    if a.ndim == 0 or b.ndim == 0:
        return multiply(a, b)
    return invoke(_op("np.tensordot"), [a, b], {"a_axes_summed": (a.ndim - 1,),
                                                "b_axes_summed": (b.ndim - 1,)})


def outer(a, b):
    return invoke(_op("np.tensordot:int_axes"), [ravel(a), ravel(b)], {"axes": 0})


def vdot(a, b):
    return dot(ravel(a), ravel(b))


def kron(a, b):
    return ndarray(_onp.kron(as_nd(a)._data, as_nd(b)._data))


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    if axis is not None:
        axisa = axisb = axisc = axis
    return invoke(_op("np.cross"), [as_nd(a), as_nd(b)], {"axisa": int(axisa), "axisb": int(axisb),
                                                          "axisc": int(axisc)})


def polyval(p, x):
    """p(x) for coefficients p (highest power first); NumPy's own for non-array arguments,
    as MXNet does."""
    if not isinstance(p, ndarray) and not isinstance(x, ndarray):
        return _onp.polyval(p, x)
    return invoke(_op("np.polyval"), [as_nd(p), as_nd(x)])
