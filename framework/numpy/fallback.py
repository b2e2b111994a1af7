"""`np.fallback`: the functions MXNet 2 serves with NumPy's own implementation (its list).

Called with framework arrays, each runs NumPy's function through the dispatch protocol
(`framework.numpy_dispatch_protocol`): NumPy computes on the arrays' buffers and array results
come back as framework arrays. What NumPy 2 removed gets its NumPy 1.x meaning here (`alltrue`,
`msort`, `in1d`, `trapz`, the `interpolation=` keyword of `nanpercentile`/`nanquantile`); NumPy's
financial functions (`mirr`, `npv`, `pmt`, `ppmt`, `pv`, `rate`) left NumPy for a separate
package and are not provided.
"""
from __future__ import annotations

import functools

import numpy as _onp

_NAMES = [
    "__version__", "_NoValue", "allclose", "alltrue", "apply_along_axis", "apply_over_axes",
    "argpartition", "argwhere", "array_equal", "array_equiv", "choose", "compress", "corrcoef",
    "correlate", "count_nonzero", "cov", "cumprod", "digitize", "divmod", "dtype", "extract",
    "float_power", "frexp", "heaviside", "histogram2d", "histogram_bin_edges", "histogramdd",
    "i0", "in1d", "intersect1d", "isclose", "isin", "ix_", "lexsort", "min_scalar_type", "mirr",
    "modf", "msort", "nanargmax", "nanargmin", "nancumprod", "nancumsum", "nanmax", "nanmedian",
    "nanmin", "nanpercentile", "nanprod", "nanquantile", "nanstd", "nansum", "nanvar", "ndim",
    "npv", "packbits", "partition", "piecewise", "pmt", "poly", "polyadd", "polydiv", "polyfit",
    "polyint", "polymul", "polysub", "positive", "ppmt", "promote_types", "ptp", "pv", "rate",
    "real", "roots", "searchsorted", "select", "setdiff1d", "setxor1d", "signbit", "size",
    "spacing", "take_along_axis", "trapz", "tril_indices_from", "trim_zeros", "union1d",
    "unpackbits", "unwrap", "vander",
]


def _alltrue(a, axis=None, out=None, keepdims=False):
    return _onp.all(a, axis=axis, out=out, keepdims=keepdims)


def _msort(a):
    return _onp.sort(a, axis=0)


def _in1d(ar1, ar2, assume_unique=False, invert=False):
    return _onp.isin(_onp.ravel(ar1), ar2, assume_unique=assume_unique, invert=invert)


def _trapz(y, x=None, dx=1.0, axis=-1):
    return _onp.trapezoid(y, x=x, dx=dx, axis=axis)


def _nan_order_stat(fn):
    """NumPy 1.x's (and MXNet's) `interpolation=` keyword is NumPy 2's `method=`."""
    @functools.wraps(fn)
    def call(a, q, axis=None, out=None, overwrite_input=False, interpolation=None,
             keepdims=False, **kwargs):
        if interpolation is not None:
            kwargs["method"] = interpolation
        return fn(a, q, axis=axis, out=out, overwrite_input=overwrite_input, keepdims=keepdims,
                  **kwargs)
    return call


_NUMPY1 = {"alltrue": _alltrue, "msort": _msort, "in1d": _in1d, "trapz": _trapz,
           "nanpercentile": _nan_order_stat(_onp.nanpercentile),
           "nanquantile": _nan_order_stat(_onp.nanquantile)}


def _wrap(fn):
    if not callable(fn) or isinstance(fn, type):
        return fn

    @functools.wraps(fn)
    def call(*args, **kwargs):
        return fn(*args, **kwargs)
    return call


__all__ = []
for _name in _NAMES:
    _obj = _NUMPY1.get(_name, getattr(_onp, _name, None))
    if _obj is None:
        continue
    globals()[_name] = _wrap(_obj)
    __all__.append(_name)
