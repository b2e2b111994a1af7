"""MXNet 2 `np` functions beyond the core modules: logspace, tri, tril_indices, indices,
percentile/quantile/median, unique and the Array-API `unique_*` forms, flatnonzero,
apply_along_axis. Each computing function is a registry op (so it traces inside a HybridBlock),
except `apply_along_axis`, which calls a Python function per slice as NumPy does."""
from __future__ import annotations

import numbers
from collections import namedtuple

import numpy as _onp

from ..frontend import op as _op
from ._base import as_nd, axis_tuple, default_float, dtype_of, invoke, ndarray

__all__ = ["logspace", "tri", "tril_indices", "indices", "percentile", "quantile", "median",
           "unique", "unique_all", "unique_counts", "unique_inverse", "unique_values",
           "flatnonzero", "apply_along_axis", "pad", "unravel_index", "hanning", "hamming",
           "blackman", "bincount", "interp", "fill_diagonal", "diag_indices_from"]


def _ctx(device=None, ctx=None) -> str:
    d = device if device is not None else ctx
    return "cpu(0)" if d is None else str(d)


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0, device=None,
             ctx=None):
    if axis != 0:
        raise NotImplementedError("logspace: only axis=0 is supported (as in MXNet)")
    return invoke(_op("np.logspace"), [], {"start": float(start), "stop": float(stop),
                                           "num": int(num), "endpoint": bool(endpoint),
                                           "base": float(base), "ctx": _ctx(device, ctx),
                                           "dtype": dtype_of(dtype) or default_float()})


def tri(N, M=None, k=0, dtype=None, device=None, ctx=None):
    return invoke(_op("np.tri"), [], {"N": int(N), "M": None if M is None else int(M), "k": int(k),
                                      "dtype": dtype_of(dtype) or default_float(),
                                      "ctx": _ctx(device, ctx)})


def tril_indices(n, k=0, m=None, device=None, ctx=None):
    return invoke(_op("np.tril_indices"), [], {"n": int(n), "k": int(k),
                                               "m": None if m is None else int(m),
                                               "ctx": _ctx(device, ctx)})


def indices(dimensions, dtype=None, device=None, ctx=None):
    if not isinstance(dimensions, (tuple, list)):
        raise ValueError("indices: dimensions must be a tuple or list of ints")
    return invoke(_op("np.indices"), [], {"dimensions": tuple(int(d) for d in dimensions),
                                          "dtype": dtype_of(dtype) or _onp.dtype(_onp.int64),
                                          "ctx": _ctx(device, ctx)})


def percentile(a, q, axis=None, out=None, overwrite_input=None, interpolation="linear",
               keepdims=False, method=None):
    interpolation = method or interpolation     # NumPy >= 1.22 spells it `method`
    attrs = {"axis": axis_tuple(axis), "interpolation": interpolation, "keepdims": keepdims}
    if isinstance(q, (int, float, _onp.number)):
        return invoke(_op("np.percentile"), [as_nd(a)], {**attrs, "q_scalar": float(q)})
    return invoke(_op("np.percentile"), [as_nd(a), as_nd(q)], attrs)


def quantile(a, q, axis=None, out=None, overwrite_input=None, interpolation="linear",
             keepdims=False, method=None):
    interpolation = method or interpolation
    q100 = q * 100 if isinstance(q, (int, float, _onp.number)) else as_nd(q) * 100
    return percentile(a, q100, axis, out, overwrite_input, interpolation, keepdims)


def median(a, axis=None, out=None, overwrite_input=None, keepdims=False):
    return percentile(a, 50.0, axis, interpolation="midpoint", keepdims=keepdims)


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None):
    return invoke(_op("np.unique"), [as_nd(ar)], {"return_index": return_index,
                                                  "return_inverse": return_inverse,
                                                  "return_counts": return_counts, "axis": axis})


UniqueAllResult = namedtuple("UniqueAllResult", ["values", "indices", "inverse_indices", "counts"])
UniqueCountsResult = namedtuple("UniqueCountsResult", ["values", "counts"])
UniqueInverseResult = namedtuple("UniqueInverseResult", ["values", "inverse_indices"])


def unique_all(x):
    return UniqueAllResult(*unique(x, True, True, True))


def unique_counts(x):
    return UniqueCountsResult(*unique(x, return_counts=True))


def unique_inverse(x):
    return UniqueInverseResult(*unique(x, return_inverse=True))


def unique_values(x):
    return unique(x)


def flatnonzero(a):
    """Indices of the non-zero entries of the flattened array (int64)."""
    from ._shape import reshape
    return reshape(invoke(_op("np.nonzero"), [reshape(as_nd(a), (-1,))]), (-1,))


def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """NumPy's apply_along_axis on the array's values, as MXNet's fallback: `func1d` gets NumPy
    slices, so NumPy's dtype rules apply (Python calls per slice: not traced)."""
    data = arr.asnumpy() if isinstance(arr, ndarray) else _onp.asarray(arr)

    def call(v):
        r = func1d(v, *args, **kwargs)
        return r.asnumpy() if isinstance(r, ndarray) else r
    return ndarray(_onp.asarray(_onp.apply_along_axis(call, axis, data)))


def pad(x, pad_width, mode="constant", constant_values=0, reflect_type="even", **kwargs):
    """NumPy's `pad` (constant, edge, reflect, symmetric, wrap, maximum, minimum, mean, median)."""
    if callable(mode) or kwargs:
        raise NotImplementedError("pad: function modes and stat_length are not supported")
    return invoke(_op("np.pad"), [as_nd(x)], {"pad_width": pad_width, "mode": mode,
                                              "constant_values": float(constant_values),
                                              "reflect_type": reflect_type})


def unravel_index(indices, shape, order="C"):
    """A tuple with one int64 coordinate array per dimension of `shape` (an int: one dim)."""
    dims = (shape,) if isinstance(shape, numbers.Integral) else shape
    res = invoke(_op("np.unravel_index"), [as_nd(indices)],
                 {"shape": tuple(int(d) for d in dims), "order": order})
    return res if isinstance(res, tuple) else (res,)


def _window(fn: str, M: int, dtype, device) -> ndarray:
    return invoke(_op(f"np.{fn}"), [], {"M": int(M), "ctx": _ctx(device),
                            "dtype": dtype_of(dtype) or default_float()})


def hanning(M, dtype=None, device=None):
    return _window("hanning", M, dtype, device)


def hamming(M, dtype=None, device=None):
    return _window("hamming", M, dtype, device)


def blackman(M, dtype=None, device=None):
    return _window("blackman", M, dtype, device)


def bincount(x, weights=None, minlength=0):
    """Counts of each non-negative integer of `x` (weighted sums with `weights`)."""
    ins = [as_nd(x)] if weights is None else [as_nd(x), as_nd(weights)]
    return invoke(_op("np.bincount"), ins, {"minlength": int(minlength),
                                            "has_weights": weights is not None})


def interp(x, xp, fp, left=None, right=None, period=None):
    """1-D linear interpolation (float64, as MXNet)."""
    attrs = {"left": left, "right": right, "period": period}
    if isinstance(x, numbers.Number):
        return invoke(_op("np.interp"), [as_nd(xp), as_nd(fp)],
                      {**attrs, "x_scalar": float(x), "x_is_scalar": True})
    return invoke(_op("np.interp"), [as_nd(xp), as_nd(fp), as_nd(x)], attrs)


def fill_diagonal(a, val, wrap=False):
    """Set the main diagonal of `a` to `val`, in place (NumPy's contract: returns None)."""
    vals = tuple(float(v) for v in _onp.ravel(val))
    res = invoke(_op("np.fill_diagonal"), [a], {"val": vals, "wrap": bool(wrap)})
    if isinstance(a, ndarray):
        a._data[...] = res._data
    return None


def diag_indices_from(arr):
    """The indices of the main diagonal of an array whose dimensions are all equal."""
    return tuple(invoke(_op("np.diag_indices_from"), [as_nd(arr)]))
