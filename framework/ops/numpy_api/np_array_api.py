"""NumPy / Array-API functions of MXNet 2's `np` that need kernels of their own: logspace, tri,
tril_indices, indices (creation), percentile (median and quantile use it), unique, and the
linalg additions eig, eigvals, lstsq. Dtypes follow MXNet 2.0 (checked against 2.0.0b1):
float creation defaults to float32, index outputs are int64, percentiles of integers are float32.
"""
from __future__ import annotations

import ast

import numpy as np

from ...base import OperatorError
from ..attrs import Attr, Bool, DType, Float, Int, IntOrTuple, Shape, Str
from ..registry import expose, register
from ..common import F32, I64, is_float
from ..tensor.reduce import reduced_shape

_CTX = {"ctx": Str("")}


def _dt(a, default=F32):
    return a.dtype if a.dtype is not None else default


# -- creation ------------------------------------------------------------------------------------
@register("_npi_logspace", attrs={"start": Float(), "stop": Float(), "num": Int(),
                                  "endpoint": Bool(True), "base": Float(10.0), "dtype": DType(F32),
                                  **_CTX},
          inputs=(), infer_shape=lambda a, s: [(a.num,)], infer_type=lambda a, d: [_dt(a)])
def logspace(a):
    if a.num < 0:
        raise OperatorError(f"logspace: number of samples, {a.num}, must be non-negative")
    return np.logspace(a.start, a.stop, a.num, endpoint=a.endpoint, base=a.base).astype(_dt(a))


@register("_npi_tri", attrs={"N": Int(), "M": Int(None, optional=True), "k": Int(0),
                             "dtype": DType(F32), **_CTX},
          inputs=(), infer_shape=lambda a, s: [(a.N, a.N if a.M is None else a.M)],
          infer_type=lambda a, d: [_dt(a)])
def tri(a):
    return np.tri(a.N, a.M, a.k, dtype=_dt(a))


def _tril_count(a) -> int:
    """Entries (i, j) of an n×m array with j <= i + k: row i holds clip(i + k + 1, 0, m)."""
    m = a.n if a.m is None else a.m
    return sum(min(max(i + a.k + 1, 0), m) for i in range(max(a.n, 0)))


@register("_npi_tril_indices", attrs={"n": Int(), "k": Int(0), "m": Int(None, optional=True),
                                      **_CTX},
          inputs=(), num_outputs=2, infer_type=lambda a, d: [I64, I64],
          infer_shape=lambda a, s: [(_tril_count(a),)] * 2)
def tril_indices(a):
    rows, cols = np.tril_indices(a.n, a.k, a.m)
    return rows.astype(I64), cols.astype(I64)


@register("_npi_indices", attrs={"dimensions": Shape(), "dtype": DType(I64), **_CTX},
          inputs=(), infer_shape=lambda a, s: [(len(a.dimensions), *a.dimensions)],
          infer_type=lambda a, d: [_dt(a, I64)])
def indices(a):
    return np.indices(a.dimensions, dtype=_dt(a, I64))


# -- padding ------------------------------------------------------------------------------------
_PAD_MODES = ("constant", "edge", "reflect", "symmetric", "wrap", "maximum", "minimum", "mean",
              "median")


def _pad_width(v):
    """`((1, 2), (0, 1))`, `(1, 2)`, `1`, or their string forms → a tuple of (before, after)."""
    v = ast.literal_eval(v) if isinstance(v, str) else v
    arr = np.asarray(v, dtype=np.int64)
    if arr.ndim > 2 or (arr.ndim == 2 and arr.shape[1] != 2) or np.any(arr < 0):
        raise ValueError(f"pad_width must be non-negative (before, after) pairs, got {v!r}")
    return tuple(tuple(int(p) for p in row) for row in np.atleast_2d(arr)) if arr.ndim == 2 \
        else tuple(int(p) for p in np.atleast_1d(arr))


def _pad_shape(a, s):
    width = np.broadcast_to(np.asarray(a.pad_width).reshape(-1, 2) if np.ndim(a.pad_width) == 2
                            else np.asarray(a.pad_width), (len(s[0]), 2))
    return [tuple(int(d + lo + hi) for d, (lo, hi) in zip(s[0], width))]


@register("_npi_pad", attrs={"pad_width": Attr(_pad_width), "mode": Str("constant",
                                                                       choices=_PAD_MODES),
                             "constant_values": Float(0.0), "reflect_type": Str("even")},
          infer_shape=_pad_shape)
def pad(a, x):
    """NumPy's `pad` (every mode); MXNet 2 names the op `_npi_pad`."""
    kw = {"constant_values": a.constant_values} if a.mode == "constant" else \
        {"reflect_type": a.reflect_type} if a.mode in ("reflect", "symmetric") else {}
    if x.size == 0 and a.mode not in ("constant", "empty"):
        raise OperatorError(f"pad: mode {a.mode!r} cannot extend an empty axis")
    return np.pad(x, a.pad_width, mode=a.mode, **kw)


# -- statistics -------------------------------------------------------------------------------
_METHODS = ("linear", "lower", "higher", "midpoint", "nearest")


def _pct_type(a, d):
    return [d[0] if is_float(d[0]) else F32]


@register("_npi_percentile", attrs={"axis": IntOrTuple(None), "interpolation": Str("linear",
                                                                                 choices=_METHODS),
                                    "keepdims": Bool(False), "q_scalar": Float(None, optional=True)},
          inputs=lambda a: ("a",) if a.q_scalar is not None else ("a", "q"), infer_type=_pct_type,
          infer_shape=lambda a, s: [(() if a.q_scalar is not None else tuple(s[1]))
                                    + reduced_shape(s[0], a.axis, a.keepdims, "percentile")])
def percentile(a, x, q=None):
    """Percentiles in [0, 100] (`q_scalar`, or the `q` input) along `axis`, NumPy's methods."""
    qs = np.asarray(a.q_scalar if a.q_scalar is not None else q, dtype=np.float64)
    if np.any((qs < 0) | (qs > 100)):
        raise OperatorError("percentile: q must be in the range [0, 100]")
    res = np.percentile(x, qs, axis=a.axis, method=a.interpolation, keepdims=a.keepdims)
    return np.asarray(res).astype(x.dtype if is_float(x.dtype) else F32)


# -- selection ------------------------------------------------------------------------------------
def _unique_outputs(a) -> int:
    return 1 + int(a.return_index) + int(a.return_inverse) + int(a.return_counts)


@register("_npi_unique", attrs={"return_index": Bool(False), "return_inverse": Bool(False),
                                "return_counts": Bool(False), "axis": Int(None, optional=True)},
          num_outputs=_unique_outputs, shape_depends_on_data=True,
          infer_type=lambda a, d: [d[0]] + [I64] * (_unique_outputs(a) - 1))
def unique(a, x):
    """Sorted unique values (data-dependent length), with first indices, inverse, counts."""
    res = np.unique(x, a.return_index, a.return_inverse, a.return_counts, a.axis)
    if not isinstance(res, tuple):
        return res
    vals, *rest = res
    return (vals, *[np.asarray(r, dtype=I64) for r in rest])


# -- linear algebra -----------------------------------------------------------------------------
def _square(op: str, x) -> None:
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise OperatorError(f"{op}: the last two dimensions must be square, got shape {x.shape}")


def _real(w, v=None):
    """MXNet returns real eigen-decompositions; complex results are an input it does not accept."""
    if np.iscomplexobj(w) and np.any(np.abs(w.imag) > 0):
        raise OperatorError("eig: the matrix has complex eigenvalues (MXNet supports real ones only)")
    return w.real if v is None else (w.real, v.real)


def _square_shape(op: str, x: tuple) -> tuple:
    if len(x) < 2 or x[-1] != x[-2]:
        raise OperatorError(f"{op}: the last two dimensions must be square, got shape {tuple(x)}")
    return tuple(x[:-1])


def _float_type(a, d):
    """Float inputs keep their dtype; integer ones compute in float32."""
    return [d[0] if is_float(d[0]) else F32]


@register("_npi_eig", num_outputs=2, infer_type=lambda a, d: _float_type(a, d) * 2,
          infer_shape=lambda a, s: [_square_shape("eig", s[0]), tuple(s[0])])
def eig(a, x):
    _square("eig", x)
    xf = x if is_float(x.dtype) else x.astype(F32)
    w, v = _real(*np.linalg.eig(xf))
    return w.astype(xf.dtype), v.astype(xf.dtype)


@register("_npi_eigvals", infer_type=_float_type,
          infer_shape=lambda a, s: [_square_shape("eigvals", s[0])])
def eigvals(a, x):
    _square("eigvals", x)
    xf = x if is_float(x.dtype) else x.astype(F32)
    return _real(np.linalg.eigvals(xf)).astype(xf.dtype)


@register("_npi_lstsq", inputs=("A", "B"), attrs={"rcond": Float(None, optional=True),
                                                 "new_default": Bool(True)}, num_outputs=4,
          shape_depends_on_data=True,   # the residuals are empty unless A has full rank
          infer_type=lambda a, d: [np.result_type(d[0], d[1], F32)] * 2 + [I64]
          + [np.result_type(d[0], d[1], F32)])
def lstsq(a, A, B):
    if A.ndim != 2 or B.ndim not in (1, 2) or A.shape[0] != B.shape[0]:
        raise OperatorError(f"lstsq: incompatible shapes {A.shape} and {B.shape} "
                            "(a is (M, N); b is (M,) or (M, K))")
    dt = np.result_type(A.dtype, B.dtype, F32)
    x, res, rank, s = np.linalg.lstsq(A.astype(dt), B.astype(dt), rcond=a.rcond)
    return x.astype(dt), res.astype(dt), np.asarray(rank, dtype=I64), s.astype(dt)


@register("_npi_unravel_index_fallback", attrs={"shape": Shape(), "order": Str("C")},
          num_outputs=lambda a: max(len(a.shape), 1),
          infer_shape=lambda a, s: [tuple(s[0])] * max(len(a.shape), 1),
          infer_type=lambda a, d: [I64] * max(len(a.shape), 1))
def unravel_index(a, x):
    """Flat indices → one coordinate array per dimension of `shape` (int64)."""
    res = np.unravel_index(x.astype(I64), a.shape, order=a.order)
    return tuple(np.asarray(r, dtype=I64) for r in res) if len(res) > 1 else np.asarray(res[0], I64)


# -- front-ends: the names framework.np / npx expose these operators under ---------------------
for _fn in ("indices", "logspace", "pad", "percentile", "tri", "tril_indices", "unique"):
    expose(f"_npi_{_fn}", f"np.{_fn}")
expose("_npi_unravel_index_fallback", "np.unravel_index")
expose("_npi_lstsq", "np.linalg.lstsq")
expose("_npi_eig", "np.linalg.eig(a)")
expose("_npi_eigvals", "np.linalg.eigvals(a)")
