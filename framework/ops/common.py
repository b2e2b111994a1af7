"""Shared helpers of the tensor op families (elemwise, binary, reduce, shape, indexing…)."""
from __future__ import annotations

import functools

import numpy as np

from ..base import OperatorError, ShapeError
from .attrs import Attr, parse_float

F32 = np.dtype(np.float32)
I64 = np.dtype(np.int64)
F64 = np.dtype(np.float64)
BOOL = np.dtype(np.bool_)


class Scalar(float):
    """A float attr value written as MXNet 2.x writes doubles (`%.17g`: 2.0 → "2", 0.1 → "0.1…01")."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "%.17g" % float(self)

    __str__ = __repr__


def parse_scalar(v) -> Scalar:
    return Scalar(parse_float(v))


def ScalarAttr(default=1.0) -> Attr:
    return Attr(parse_scalar, Scalar(default) if default is not None else None)


def is_float(dt) -> bool:
    return np.dtype(dt).kind in "fc"


def float_math(fn):
    """`fn(x, out=None)`, a float formula MXNet evaluates in the input's own dtype: integer or bool
    input is computed in float32 and truncated toward zero back into that dtype (C++'s
    `DType(expr)`), so sigmoid of int32 stays int32."""
    @functools.wraps(fn)
    def run(x, *args, out=None, **kw):
        if x.dtype.kind in "fc":
            return fn(x, *args, out=out, **kw)
        y = truncate_to(x.dtype, fn(x.astype(np.float32), *args, **kw))
        if out is None:
            return y
        np.copyto(out, y)
        return out
    return run


def truncate_to(dtype, y: np.ndarray) -> np.ndarray:
    """`y` stored in `dtype` as MXNet's kernels store a float result into an integer output."""
    dtype = np.dtype(dtype)
    if dtype.kind in "fc":
        return y.astype(dtype, copy=False)
    with np.errstate(invalid="ignore"):   # inf/NaN have no integer value: C++ leaves it undefined
        return np.trunc(y).astype(dtype)


def result_dtype(d1, d2) -> np.dtype:
    """MXNet's numpy promotion: a float beats any int/bool (kept as is), float vs float → wider."""
    d1, d2 = np.dtype(d1), np.dtype(d2)
    if d1 == d2:
        return d1
    f1, f2 = is_float(d1), is_float(d2)
    if f1 and not f2:
        return d1
    if f2 and not f1:
        return d2
    return np.result_type(d1, d2)


def norm_axis(axis: int, ndim: int, op: str = "") -> int:
    if not -ndim <= axis < max(ndim, 1):
        raise OperatorError(f"{op}: axis {axis} is out of bounds for array of dimension {ndim}")
    return axis + ndim if axis < 0 else axis


def norm_axes(axes, ndim: int, op: str = "") -> tuple:
    out = tuple(norm_axis(a, ndim, op) for a in axes)
    if len(set(out)) != len(out):
        raise OperatorError(f"{op}: repeated axis in {tuple(axes)}")
    return out


def bshape(op: str, *shapes) -> tuple:
    """NumPy broadcast of shapes, with MXNet's error wording."""
    try:
        return tuple(np.broadcast_shapes(*[tuple(s) for s in shapes]))
    except ValueError:
        raise ShapeError(f"{op}: operands could not be broadcast together with shapes "
                         + " ".join(str(tuple(s)) for s in shapes)) from None


def same_shape(a, s):
    return [tuple(s[0])]
