"""NumPy 1.x as MXNet's tests expect it, for the upstream run only (never the product's runtime).

MXNet 2.0 was tested against NumPy 1.x; under NumPy 2 some of its tests' *reference* computations
fail before the framework is even compared (a removed name such as `np.sometrue`, `np.float`,
`np.round_`; `interpolation=`; a result that became a tuple or a named tuple). `install(module)`
replaces every global of a test module that is the `numpy` module with `numpy1`: NumPy 2 itself
(every attribute is NumPy's) plus NumPy 1.x's removed names and the few NumPy 1.x results listed
below. Nothing outside those test modules sees it, so `framework` runs on plain NumPy 2.
"""
from __future__ import annotations

import builtins
import functools
import types

import numpy as _onp


def _percentile_kind(fn):
    """`interpolation=` (NumPy 1.x; removed in 2.x) is `method=`."""
    @functools.wraps(fn)
    def call(*args, interpolation=None, **kwargs):
        if interpolation is not None:
            kwargs["method"] = interpolation
        return fn(*args, **kwargs)
    return call


def _result_as(kind: type, fn):
    """NumPy 1.x returned a list (several arrays in or out) or, in linalg, a plain tuple where
    NumPy 2 returns a tuple or a named tuple."""
    @functools.wraps(fn)
    def call(*args, **kwargs):
        res = fn(*args, **kwargs)
        return kind(res) if isinstance(res, tuple) else res
    return call


def _nonzero(a):
    """NumPy 1.x treated a 0-d array as 1-d (NumPy 2 raises)."""
    a = _onp.asarray(a)
    return _onp.nonzero(_onp.atleast_1d(a) if a.ndim == 0 else a)


def _solve(a, b):
    """NumPy 1.x read `b` of one dimension less than `a` as a stack of vectors."""
    a, b = _onp.asarray(a), _onp.asarray(b)
    if b.ndim > 1 and b.ndim == a.ndim - 1:
        return _onp.linalg.solve(a, b[..., None])[..., 0]
    return _onp.linalg.solve(a, b)


def _in1d(ar1, ar2, assume_unique=False, invert=False, **kw):
    return _onp.isin(_onp.ravel(ar1), ar2, assume_unique=assume_unique, invert=invert, **kw)


def _proxy(name: str, target: types.ModuleType, extra: dict) -> types.ModuleType:
    mod = types.ModuleType(name, target.__doc__)
    mod.__dict__.update(extra)
    mod.__getattr__ = lambda attr: getattr(target, attr)   # PEP 562: all else is NumPy's
    return mod


_LINALG = {n: _result_as(tuple, getattr(_onp.linalg, n))
           for n in ("eig", "eigh", "qr", "svd", "slogdet", "lstsq")}
_LINALG["solve"] = _solve

_REMOVED = {
    # the builtin-type aliases (removed in 1.24) and NumPy 2's removed aliases
    "float": builtins.float, "int": builtins.int, "bool": builtins.bool,
    "object": builtins.object, "str": builtins.str, "complex": builtins.complex,
    "long": builtins.int, "unicode": builtins.str,
    "float_": _onp.float64, "complex_": _onp.complex128, "cfloat": _onp.complex128,
    "longfloat": _onp.longdouble, "string_": _onp.bytes_, "unicode_": _onp.str_,
    "Inf": _onp.inf, "Infinity": _onp.inf, "infty": _onp.inf, "NaN": _onp.nan,
    "PINF": _onp.inf, "NINF": -_onp.inf, "PZERO": 0.0, "NZERO": -0.0,
    "sometrue": _onp.any, "alltrue": _onp.all, "product": _onp.prod,
    "cumproduct": _onp.cumprod, "round_": _onp.round, "row_stack": _onp.vstack,
    "trapz": _onp.trapezoid, "in1d": _in1d,
    "msort": lambda a: _onp.sort(a, axis=0),
    "asfarray": lambda a, dtype=_onp.float64: _onp.asarray(a, dtype=dtype),
    # NumPy 1.x results
    "quantile": _percentile_kind(_onp.quantile), "percentile": _percentile_kind(_onp.percentile),
    "nanquantile": _percentile_kind(_onp.nanquantile),
    "nanpercentile": _percentile_kind(_onp.nanpercentile),
    "nonzero": _nonzero, "meshgrid": _result_as(list, _onp.meshgrid),
    "broadcast_arrays": _result_as(list, _onp.broadcast_arrays),
    **{f"atleast_{d}d": _result_as(list, getattr(_onp, f"atleast_{d}d")) for d in (1, 2, 3)},
    "linalg": _proxy("numpy.linalg", _onp.linalg, _LINALG),
}

numpy1 = _proxy("numpy", _onp, _REMOVED)


def install(module: types.ModuleType) -> None:
    """Point every global of `module` that is the `numpy` module at `numpy1`."""
    for name, value in list(vars(module).items()):
        if value is _onp:
            setattr(module, name, numpy1)
