"""Reductions of `framework.np` (the ops exposed as `np.sum`, `np.mean`, …; MXNet 2.x attrs)."""
from __future__ import annotations

import numpy as _onp

from ..frontend import op as _op
from ._base import as_nd, axis_tuple, default_float, dtype_of, invoke
from ._math import isnan, multiply, not_equal, true_divide, where

__all__ = ["sum", "mean", "max", "min", "amax", "amin", "prod", "std", "var", "argmax", "argmin",
           "cumsum", "all", "any", "nansum", "average", "count_nonzero", "sometrue", "product"]


def _finish(res, out):
    if out is None:
        return res
    _onp.copyto(out._data, res._data, casting="unsafe")
    return out


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, **kw):  # noqa: A001
    return _finish(invoke(_op("np.sum"), [as_nd(a)], {"axis": axis_tuple(axis),
                                                      "dtype": dtype_of(dtype),
                                                      "keepdims": bool(keepdims),
                                                      "initial": initial}), out)


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, **kw):
    return _finish(invoke(_op("np.prod"), [as_nd(a)], {"axis": axis_tuple(axis),
                                                       "dtype": dtype_of(dtype),
                                                       "keepdims": bool(keepdims),
                                                       "initial": initial}), out)


def mean(a, axis=None, dtype=None, out=None, keepdims=False, **kw):
    """Arithmetic mean; MXNet records dtype float32 (the default dtype) when none is given."""
    return _finish(invoke(_op("np.mean"), [as_nd(a)], {"axis": axis_tuple(axis),
                                                       "dtype": dtype_of(dtype) or default_float(),
                                                       "keepdims": bool(keepdims),
                                                       "initial": None}), out)


def max(a, axis=None, out=None, keepdims=False, initial=None, **kw):  # noqa: A001
    return _finish(invoke(_op("np.max"), [as_nd(a)], {"axis": axis_tuple(axis),
                                                      "keepdims": bool(keepdims),
                                                      "initial": initial}), out)


def min(a, axis=None, out=None, keepdims=False, initial=None, **kw):  # noqa: A001
    return _finish(invoke(_op("np.min"), [as_nd(a)], {"axis": axis_tuple(axis),
                                                      "keepdims": bool(keepdims),
                                                      "initial": initial}), out)


amax, amin = max, min


def _stat(fn, a, axis, dtype, out, ddof, keepdims):
    attrs = {"axis": axis_tuple(axis), "dtype": dtype_of(dtype), "ddof": int(ddof),
             "keepdims": bool(keepdims)}
    return _finish(invoke(_op(fn), [as_nd(a)], attrs), out)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kw):
    return _stat("np.std", a, axis, dtype, out, ddof, keepdims)


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kw):
    return _stat("np.var", a, axis, dtype, out, ddof, keepdims)


def argmax(a, axis=None, out=None, keepdims=False):
    return _finish(invoke(_op("np.argmax"), [as_nd(a)], {"axis": axis, "keepdims": bool(keepdims)}),
                   out)


def argmin(a, axis=None, out=None, keepdims=False):
    return _finish(invoke(_op("np.argmin"), [as_nd(a)], {"axis": axis, "keepdims": bool(keepdims)}),
                   out)


def cumsum(a, axis=None, dtype=None, out=None):
    return _finish(invoke(_op("np.cumsum"), [as_nd(a)], {"axis": axis, "dtype": dtype_of(dtype)}),
                   out)


def all(a, axis=None, out=None, keepdims=False):  # noqa: A001
    return _finish(invoke(_op("np.all"), [as_nd(a)], {"axis": axis_tuple(axis),
                                                      "keepdims": bool(keepdims)}), out)


def any(a, axis=None, out=None, keepdims=False):  # noqa: A001
    return _finish(invoke(_op("np.any"), [as_nd(a)], {"axis": axis_tuple(axis),
                                                      "keepdims": bool(keepdims)}), out)


# MXNet registers `_np_sometrue` and `_np_product` as aliases of its any/prod operators
sometrue, product = any, prod


def nansum(a, axis=None, dtype=None, out=None, keepdims=False, **kw):
    a = as_nd(a)
    return sum(where(isnan(a), 0, a), axis=axis, dtype=dtype, out=out, keepdims=keepdims)


def average(a, axis=None, weights=None, returned=False, out=None):
    a = as_nd(a)
    if weights is None:
        avg = mean(a, axis=axis)
        cnt = a.size / (avg.size or 1)
        return (avg, cnt) if returned else avg
    w = as_nd(weights)
    if w.shape != a.shape and axis is not None:
        shape = [1] * a.ndim
        shape[axis] = w.shape[0]
        w = w.reshape(tuple(shape))
    num = sum(multiply(a, w), axis=axis)
    den = sum(w * _onp.ones(a.shape, dtype=a.dtype) if w.shape != a.shape else w, axis=axis)
    avg = true_divide(num, den)
    return (avg, den) if returned else avg


def count_nonzero(a, axis=None):
    a = as_nd(a)
    return sum(not_equal(a, 0).astype(_onp.int64), axis=axis)


