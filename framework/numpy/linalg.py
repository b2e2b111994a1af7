"""`framework.np.linalg`: norm (MXNet's flag convention) and the functions that do more than call
their op; the others (inv, det, slogdet, solve, tensorinv, eig, eigvals) are generated from the
names the op families expose (`framework.frontend.install`)."""
from __future__ import annotations

import numpy as _onp

from ..ndarray import ndarray
from ..symbol.graph import Symbol
from .. import frontend as _frontend
from ..frontend import op as _op
from ._base import as_nd, axis_tuple, invoke
from ._math import absolute
from ._reduce import max as _max, min as _min, sum as _sum

__all__ = ["qr", "tensorsolve", "norm", "cholesky", "svd", "eigh", "eigvalsh", "pinv",
           "matrix_rank", "svdvals", "matrix_transpose", "lstsq"]


def _norm(x, attrs):
    return invoke(_op("np.linalg.norm"), [x], attrs)


def norm(x, ord=None, axis=None, keepdims=False):
    """Vector / matrix norms. Flags as MXNet: -2 all-elements 2-norm, -1 vector p-norm,
    0 matrix 2-norm, 1 Frobenius, 2 nuclear."""
    x = as_nd(x)
    ax = axis_tuple(axis)
    if ax is None and ord is not None and x.ndim == 2:   # a matrix: NumPy's matrix norms
        ax = (0, 1)
    if ax is None and ord is None:
        return _norm(x, {"ord": 2, "axis": None, "keepdims": keepdims, "flag": -2})
    if ax is not None and len(ax) == 2:
        r, c = ax
        if ord in ("inf", "-inf", float("inf"), float("-inf")):
            if not keepdims and r > c:
                r -= 1
            s = _sum(absolute(x), axis=c, keepdims=keepdims)
            return (_max if ord in ("inf", float("inf")) else _min)(s, axis=r, keepdims=keepdims)
        if ord in (1, -1):
            if not keepdims and r < c:
                c -= 1
            s = _sum(absolute(x), axis=r, keepdims=keepdims)
            return (_max if ord == 1 else _min)(s, axis=c, keepdims=keepdims)
        if ord in (2, -2):
            return _norm(x, {"ord": ord, "axis": ax, "keepdims": keepdims,
                                             "flag": 0})
        if ord is None:
            return _norm(x, {"ord": 2, "axis": ax, "keepdims": keepdims,
                                             "flag": 1})
    if ord in ("inf", float("inf")) or ord in ("-inf", float("-inf")):
        f = _max if ord in ("inf", float("inf")) else _min
        return f(absolute(x), axis=ax, keepdims=keepdims)
    if ord is None:
        return _norm(x, {"ord": 2, "axis": ax, "keepdims": keepdims, "flag": 1})
    if ord == "nuc":
        return _norm(x, {"ord": 2, "axis": ax, "keepdims": keepdims, "flag": 2})
    if ord in ("fro", "f"):
        return _norm(x, {"ord": 2, "axis": ax, "keepdims": keepdims, "flag": 1})
    return _norm(x, {"ord": ord, "axis": ax, "keepdims": keepdims, "flag": -1})


def qr(a, mode="reduced"):
    if mode != "reduced":
        raise NotImplementedError("Only default mode='reduced' is implemented.")
    return tuple(invoke(_op("np.linalg.qr"), [as_nd(a)]))


def tensorsolve(a, b, axes=None):
    return invoke(_op("np.linalg.tensorsolve"), [as_nd(a), as_nd(b)],
                  {"a_axes": () if axes is None else tuple(int(k) for k in axes)})


def cholesky(a, upper=False):
    return invoke(_op("np.linalg.cholesky"), [as_nd(a)], {"lower": not upper})


def svd(a):
    return invoke(_op("np.linalg.svd"), [as_nd(a)])


def _uplo(upper, UPLO) -> str:
    """MXNet 2 takes `upper=` (bool); NumPy's `UPLO=` ('L'/'U') is accepted too."""
    if isinstance(upper, str):
        return upper.upper()
    return UPLO.upper() if UPLO is not None else ("U" if upper else "L")


def eigh(a, upper=False, UPLO=None):
    return invoke(_op("np.linalg.eigh"), [as_nd(a)], {"UPLO": _uplo(upper, UPLO)})


def eigvalsh(a, upper=False, UPLO=None):
    return invoke(_op("np.linalg.eigvalsh"), [as_nd(a)], {"UPLO": _uplo(upper, UPLO)})


def pinv(a, rcond=1e-15, hermitian=False):
    """Pseudo-inverse; `rcond` a number or an array of cutoffs (one per matrix)."""
    if isinstance(rcond, (ndarray, Symbol, _onp.ndarray, list)):
        return invoke(_op("np.linalg.pinv"), [as_nd(a), as_nd(rcond)],
                      {"hermitian": bool(hermitian)})
    return invoke(_op("np.linalg.pinv:scalar_rcond"), [as_nd(a)], {"rcond": float(rcond),
                                                          "hermitian": bool(hermitian)})


def matrix_rank(M, tol=None, hermitian=False):
    """Rank by SVD (int64); `tol` None (NumPy's cutoff), a number, or an array of cutoffs."""
    if isinstance(tol, (ndarray, Symbol, _onp.ndarray, list)):
        return invoke(_op("np.linalg.matrix_rank"), [as_nd(M), as_nd(tol)],
                      {"hermitian": bool(hermitian)})
    return invoke(_op("np.linalg.matrix_rank:scalar_tol"), [as_nd(M)],
                  {"tol": None if tol is None else float(tol), "hermitian": bool(hermitian)})


def svdvals(a):
    """Singular values, descending (the `s` of `svd`)."""
    return invoke(_op("np.linalg.svd"), [as_nd(a)])[1]


def matrix_transpose(a):
    """Swap the last two axes (Array API)."""
    a = as_nd(a)
    if a.ndim < 2:
        raise ValueError(f"matrix_transpose needs at least 2 dimensions, got shape {a.shape}")
    return invoke(_op("np.swapaxes"), [a], {"dim1": -1, "dim2": -2})


# inv, det, slogdet, solve, tensorinv, eig, eigvals: generated from their ops' signatures
__all__ += _frontend.install("np.linalg", globals(), as_nd)


def lstsq(a, b, rcond="warn"):
    """Least squares; `rcond='warn'` (NumPy's old default) means machine precision × max(M, N)."""
    return invoke(_op("np.linalg.lstsq"), [as_nd(a), as_nd(b)],
                  {"rcond": None if rcond in ("warn", None) else float(rcond)})
