"""More of MXNet 2's `np`/`npx` functions with kernels of their own: the window functions
(hanning, hamming, blackman), bincount, interp, fill_diagonal, diag_indices_from and
npx.constraint_check. Dtypes follow MXNet 2.0 (checked against 2.0.0b1)."""
from __future__ import annotations

import numpy as np

from ..base import OperatorError
from ._common import F32, I64
from .attrs import Bool, DType, Float, FloatTuple, Int, Str
from .registry import register


def _window(name: str, fn):
    @register(f"_npi_{name}", attrs={"M": Int(), "ctx": Str(""), "dtype": DType(F32)}, inputs=(),
              infer_shape=lambda a, s: [(max(a.M, 0),)], infer_type=lambda a, d: [a.dtype or F32])
    def kernel(a):
        return fn(a.M).astype(a.dtype or F32)
    kernel.__doc__ = f"NumPy's {name} window of M points (empty for M < 1)."
    return kernel


hanning = _window("hanning", np.hanning)
hamming = _window("hamming", np.hamming)
blackman = _window("blackman", np.blackman)


def _bincount_inputs(a):
    return ("data", "weights") if a.has_weights else ("data",)


def _bincount_type(a, d):
    if a.has_weights:
        return [d[1]]
    return [d[0] if d[0] is not None and np.dtype(d[0]).kind in "iu" else I64]


@register("_npi_bincount", attrs={"minlength": Int(0), "has_weights": Bool(False)},
          inputs=_bincount_inputs, infer_type=_bincount_type)
def bincount(a, data, weights=None):
    """Occurrences of each non-negative integer in `data` (summed `weights` if given)."""
    if data.size and data.min() < 0:
        raise OperatorError("bincount: input data must be non-negative")
    if a.minlength < 0:
        raise OperatorError("bincount: minlength must be non-negative")
    out = np.bincount(data.astype(np.int64).ravel(), None if weights is None else weights.ravel(),
                      a.minlength)
    return out.astype(_bincount_type(a, [data.dtype] + ([weights.dtype] if a.has_weights else []))[0])


def _interp_inputs(a):
    return ("xp", "fp") if a.x_is_scalar else ("xp", "fp", "x")


@register("_npi_interp", attrs={"left": Float(None, optional=True),
                                "right": Float(None, optional=True),
                                "period": Float(None, optional=True), "x_scalar": Float(0.0),
                                "x_is_scalar": Bool(False)},
          inputs=_interp_inputs,
          infer_shape=lambda a, s: [() if a.x_is_scalar else tuple(s[2])],
          infer_type=lambda a, d: [np.dtype(np.float64)])
def interp(a, xp, fp, x=None):
    """NumPy's 1-D linear interpolation of (xp, fp) at x (float64, as MXNet)."""
    if a.period is not None and a.period == 0:
        raise OperatorError("interp: period must be a non-zero value")
    at = a.x_scalar if a.x_is_scalar else x
    return np.asarray(np.interp(at, xp, fp, a.left, a.right, a.period), np.float64)


@register("_npi_fill_diagonal", attrs={"val": FloatTuple(), "wrap": Bool(False)},
          infer_shape=lambda a, s: [tuple(s[0])])
def fill_diagonal(a, x):
    """A copy of x with its main diagonal set to `val` (repeated along it)."""
    if x.ndim < 2 or (x.ndim > 2 and len(set(x.shape)) != 1):
        raise OperatorError(f"fill_diagonal: needs a 2-D array or all dimensions equal, "
                            f"got {x.shape}")
    out = x.copy()
    np.fill_diagonal(out, np.asarray(a.val, np.float64).astype(x.dtype), a.wrap)
    return out


def _diag_shapes(a, s):
    x = tuple(s[0])
    if len(x) < 2 or len(set(x)) != 1:
        raise OperatorError(f"diag_indices_from: needs an array with all dimensions equal, got {x}")
    return [(len(x), x[0])]


@register("_npi_diag_indices_from", infer_shape=_diag_shapes, infer_type=lambda a, d: [I64])
def diag_indices_from(a, x):
    """The indices of the main diagonal: an (ndim, n) int64 array, one row per dimension."""
    _diag_shapes(a, [x.shape])
    return np.stack(np.diag_indices_from(x)).astype(np.int64)


@register("_npx_constraint_check", attrs={"msg": Str("Constraint violated.")},
          infer_shape=lambda a, s: [()], infer_type=lambda a, d: [np.dtype(bool)])
def constraint_check(a, x):
    """True, or ValueError(msg) when any element of the boolean input is false."""
    if not np.all(x):
        raise OperatorError(a.msg)
    return np.asarray(True)
