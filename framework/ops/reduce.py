"""Reductions: 1.x (`sum`, `mean`, `max`… with `exclude`, full reduction → shape (1,)) and 2.x
`_npi_*` (NumPy semantics: `axis=None` → all, `axis=()` → none, full reduction → shape ())."""
from __future__ import annotations

import numpy as np

from ..base import OperatorError
from .attrs import Bool, DType, Float, Int, IntOrTuple, Shape
from .registry import register
from ._common import BOOL, F32, I64, ScalarAttr, is_float, norm_axes, norm_axis


def _ret(r):
    return r if type(r) is np.ndarray else np.asarray(r)


def _as_tuple(ax):
    if ax is None:
        return None
    return (ax,) if isinstance(ax, int) else tuple(ax)


# -- 1.x reductions -----------------------------------------------------------------------------
def _legacy_axes(a, ndim, name):
    ax = a.axis
    excl = getattr(a, "exclude", False)
    if ax is None or len(ax) == 0:
        axes = () if excl and ax is not None else tuple(range(ndim))
        return axes
    axes = norm_axes(ax, ndim, name)
    if excl:
        axes = tuple(i for i in range(ndim) if i not in axes)
    return axes


def _legacy_out_shape(shape, axes, keepdims):
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    out = tuple(d for i, d in enumerate(shape) if i not in axes)
    return out if out else (1,)


_LEGACY_ATTRS = {"axis": Shape(None), "keepdims": Bool(False), "exclude": Bool(False)}


def _legacy_reduce(name, fn):
    def kernel(a, x):
        axes = _legacy_axes(a, x.ndim, name)
        with np.errstate(all="ignore"):
            r = fn(x, axis=axes, keepdims=a.keepdims)
        r = _ret(r)
        if r.dtype != x.dtype:
            r = r.astype(x.dtype)
        if r.ndim == 0:
            r = r.reshape(1)
        return r

    def shape(a, s):
        return [_legacy_out_shape(s[0], _legacy_axes(a, len(s[0]), name), a.keepdims)]
    return kernel, shape


for _name, _aliases, _fn in [("sum", ("sum_axis",), np.sum), ("mean", (), np.mean),
                             ("prod", (), np.prod), ("nansum", (), np.nansum),
                             ("nanprod", (), np.nanprod), ("max", ("max_axis",), np.max),
                             ("min", ("min_axis",), np.min)]:
    _k, _s = _legacy_reduce(_name, _fn)
    register(_name, *_aliases, attrs=dict(_LEGACY_ATTRS), infer_shape=_s, strict=True)(_k)


def _legacy_arg(fn):
    def kernel(a, x):
        if a.axis is None:
            r = np.asarray(fn(x.reshape(-1)), dtype=x.dtype)
            return r.reshape((1,) * x.ndim if a.keepdims else (1,))
        ax = norm_axis(a.axis, x.ndim, "argmax")
        return _ret(fn(x, axis=ax, keepdims=a.keepdims).astype(x.dtype))

    def shape(a, s):
        s = s[0]
        if a.axis is None:
            return [(1,) * len(s) if a.keepdims else (1,)]
        ax = norm_axis(a.axis, len(s), "argmax")
        return [_legacy_out_shape(s, (ax,), a.keepdims)]
    return kernel, shape


for _name, _fn in [("argmax", np.argmax), ("argmin", np.argmin)]:
    _k, _s = _legacy_arg(_fn)
    register(_name, attrs={"axis": Int(None), "keepdims": Bool(False)}, infer_shape=_s,
             strict=True)(_k)


@register("argmax_channel", infer_shape=lambda a, s: [tuple(s[0][:1])])
def argmax_channel(a, x):
    return _ret(np.argmax(x.reshape(x.shape[0], -1), axis=1).astype(x.dtype))


def _moments_shape(a, s):
    axes = tuple(range(len(s[0]))) if a.axes is None else norm_axes(a.axes, len(s[0]))
    o = _legacy_out_shape(s[0], axes, a.keepdims)
    return [o, o]


@register("moments", "_npx_moments", attrs={"axes": Shape(None), "keepdims": Bool(False)},
          infer_shape=_moments_shape, output_names=("mean", "var"), num_outputs=2, strict=True)
def moments(a, x):
    """Mean and (biased) variance over `axes`."""
    axes = tuple(range(x.ndim)) if a.axes is None else norm_axes(a.axes, x.ndim, "moments")
    m = np.mean(x, axis=axes, keepdims=True)
    v = np.mean(np.square(x - m), axis=axes, keepdims=a.keepdims)
    if not a.keepdims:
        m = m.reshape(v.shape)
    if m.ndim == 0:
        m, v = m.reshape(1), v.reshape(1)
    return _ret(m.astype(x.dtype, copy=False)), _ret(v.astype(x.dtype, copy=False))


def _legacy_norm_shape(a, s):
    axes = tuple(range(len(s[0]))) if a.axis is None else norm_axes(a.axis, len(s[0]))
    return [_legacy_out_shape(s[0], axes, a.keepdims)]


@register("norm", attrs={"ord": Int(2), "axis": Shape(None), "out_dtype": DType(None),
                         "keepdims": Bool(False)}, infer_shape=_legacy_norm_shape, strict=True)
def norm_legacy(a, x):
    """1.x `norm`: L1 or L2 norm over `axis` (all axes when omitted)."""
    axes = tuple(range(x.ndim)) if a.axis is None else norm_axes(a.axis, x.ndim, "norm")
    xf = x.astype(np.float64) if not is_float(x.dtype) else x
    if a.ord == 1:
        r = np.sum(np.abs(xf), axis=axes, keepdims=a.keepdims)
    else:
        r = np.sqrt(np.sum(np.square(xf), axis=axes, keepdims=a.keepdims))
    r = _ret(r).astype(a.out_dtype or x.dtype, copy=False)
    return r.reshape(1) if r.ndim == 0 else r


# -- 2.x numpy reductions -----------------------------------------------------------------------
def _np_axes(axis, ndim, name):
    if axis is None:
        return tuple(range(ndim))
    return norm_axes(_as_tuple(axis), ndim, name)


def _np_out_shape(shape, axes, keepdims):
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def _np_shape_fn(name):
    def shape(a, s):
        return [_np_out_shape(s[0], _np_axes(a.axis, len(s[0]), name), a.keepdims)]
    return shape


_NP_ATTRS = {"axis": IntOrTuple(None), "dtype": DType(None), "keepdims": Bool(False),
             "initial": Float(None, optional=True)}
_NP_NODTYPE = {"axis": IntOrTuple(None), "keepdims": Bool(False),
               "initial": Float(None, optional=True)}


def _sum_dtype(a, d):
    if a.dtype is not None:
        return a.dtype
    return F32 if d == BOOL else d     # MXNet 2.0: np.sum(bool array) is float32


def _mean_dtype(a, d):
    if a.dtype is not None:
        return a.dtype
    return d if is_float(d) else F32


def _np_reduce(name, fn, dtype_rule, ufunc=None):
    def kernel(a, x):
        axes = _np_axes(a.axis, x.ndim, name)
        dt = dtype_rule(a, x.dtype)
        xin = x if x.dtype == dt or not is_float(dt) else x.astype(dt)
        with np.errstate(all="ignore"):
            r = fn(xin, axis=axes, keepdims=a.keepdims)
            if getattr(a, "initial", None) is not None and ufunc is not None:
                r = ufunc(r, a.initial)
        r = _ret(r)
        return r if r.dtype == dt else r.astype(dt)

    def infer_type(a, d):
        return [dtype_rule(a, d[0])]
    return kernel, infer_type


for _name, _aliases, _fn, _rule, _uf, _attrs in [
        ("_npi_sum", ("_np_sum",), np.sum, _sum_dtype, np.add, _NP_ATTRS),
        ("_npi_prod", ("_np_prod",), np.prod, _sum_dtype, np.multiply, _NP_ATTRS),
        ("_npi_mean", (), np.mean, _mean_dtype, None, _NP_ATTRS),
        ("_npi_max", ("_np_max",), np.max, lambda a, d: d, np.maximum, _NP_NODTYPE),
        ("_npi_min", ("_np_min",), np.min, lambda a, d: d, np.minimum, _NP_NODTYPE)]:
    _k, _t = _np_reduce(_name, _fn, _rule, _uf)
    register(_name, *_aliases, attrs=dict(_attrs), infer_shape=_np_shape_fn(_name),
             infer_type=_t, strict=True)(_k)


def _bool_t(a, d):
    return [BOOL]


def _anyall(fn, name):
    def kernel(a, x):
        return _ret(fn(x, axis=_np_axes(a.axis, x.ndim, name), keepdims=a.keepdims))
    return kernel


for _name, _fn in [("_npi_any", np.any), ("_npi_all", np.all)]:
    register(_name, _name.replace("_npi_", "_np_"),
             attrs={"axis": IntOrTuple(None), "keepdims": Bool(False)},
             infer_shape=_np_shape_fn(_name), infer_type=_bool_t, strict=True)(_anyall(_fn, _name))


def _stat(fn):
    def kernel(a, x):
        axes = _np_axes(a.axis, x.ndim, "std")
        dt = _mean_dtype(a, x.dtype)
        xin = x if x.dtype == dt else x.astype(dt)
        with np.errstate(all="ignore"):
            return _ret(fn(xin, axis=axes, ddof=a.ddof, keepdims=a.keepdims)).astype(dt, copy=False)
    return kernel


for _name, _fn in [("_npi_std", np.std), ("_npi_var", np.var)]:
    register(_name, attrs={"axis": IntOrTuple(None), "dtype": DType(None), "ddof": Int(0),
                           "keepdims": Bool(False)}, infer_shape=_np_shape_fn(_name),
             infer_type=lambda a, d: [_mean_dtype(a, d[0])], strict=True)(_stat(_fn))


def _scalar_arg(a, name):
    """argmax/argmin of a 0-d array along `axis` (0 or -1 only): index 0, a 0-d result (NumPy
    keeps no dimension for it, keepdims or not)."""
    if a.axis not in (0, -1):
        raise OperatorError(f"{name}: axis {a.axis} is out of bounds for array of dimension 0")
    return np.zeros((), dtype=I64)


def _np_arg(fn, name):
    def kernel(a, x):
        if a.axis is None:
            r = np.asarray(fn(x.reshape(-1)), dtype=I64)
            return r.reshape((1,) * x.ndim) if a.keepdims else r
        if x.ndim == 0:       # NumPy reads a 0-d array as one element along axis 0 / -1
            return _ret(np.asarray(_scalar_arg(a, name), dtype=I64))
        ax = norm_axis(a.axis, x.ndim, name)
        return _ret(fn(x, axis=ax, keepdims=a.keepdims).astype(I64, copy=False))

    def shape(a, s):
        s = s[0]
        if len(s) == 0 and a.axis is not None:
            return [np.shape(_scalar_arg(a, name))]
        if a.axis is None:
            return [(1,) * len(s) if a.keepdims else ()]
        return [_np_out_shape(s, (norm_axis(a.axis, len(s), name),), a.keepdims)]
    return kernel, shape


for _name, _fn in [("_npi_argmax", np.argmax), ("_npi_argmin", np.argmin)]:
    _k, _s = _np_arg(_fn, _name)
    register(_name, attrs={"axis": Int(None), "keepdims": Bool(False)}, infer_shape=_s,
             infer_type=lambda a, d: [I64], strict=True)(_k)


def _cumsum_shape(a, s):
    if a.axis is None:
        return [(int(np.prod(s[0])),)]
    return [tuple(s[0])]


def _cumsum_type(a, d):
    if a.dtype is not None:
        return [a.dtype]
    return [I64 if d[0] == BOOL else d[0]]


@register("_npi_cumsum", "_np_cumsum", "cumsum", attrs={"axis": Int(None), "dtype": DType(None)},
          infer_shape=_cumsum_shape, infer_type=_cumsum_type, strict=True)
def cumsum(a, x):
    dt = _cumsum_type(a, [x.dtype])[0]
    if a.axis is None:
        return np.cumsum(x.reshape(-1), dtype=dt)
    return np.cumsum(x, axis=norm_axis(a.axis, x.ndim, "cumsum"), dtype=dt)


def _npnorm_shape(a, s):
    return [_np_out_shape(s[0], _np_axes(a.axis, len(s[0]), "norm"), a.keepdims)]


@register("_npi_norm", attrs={"ord": ScalarAttr(2.0), "axis": IntOrTuple(None), "keepdims": Bool(False),
                              "flag": Int(-1)},
          infer_shape=_npnorm_shape, infer_type=lambda a, d: [d[0] if is_float(d[0]) else F32],
          strict=True)
def np_norm(a, x):
    """`np.linalg.norm`: flag -2/1 Frobenius (sqrt of sum of squares), -1 vector p-norm,
    0 matrix 2-norm (largest singular value), 2 nuclear norm."""
    dt = x.dtype if is_float(x.dtype) else F32
    xf = x.astype(dt, copy=False)
    axes = _np_axes(a.axis, x.ndim, "norm")
    kd = a.keepdims
    if a.flag in (-2, 1):
        r = np.sqrt(np.sum(np.square(xf), axis=axes, keepdims=kd))
    elif a.flag in (0, 2):
        ordv = "nuc" if a.flag == 2 else (2 if a.ord > 0 else -2)
        r = np.linalg.norm(xf, ord=ordv, axis=axes, keepdims=kd)
    else:
        p = a.ord
        ax = axes
        if p == 2:
            r = np.sqrt(np.sum(np.square(xf), axis=ax, keepdims=kd))
        elif p == 1:
            r = np.sum(np.abs(xf), axis=ax, keepdims=kd)
        elif p == np.inf:
            r = np.max(np.abs(xf), axis=ax, keepdims=kd)
        elif p == -np.inf:
            r = np.min(np.abs(xf), axis=ax, keepdims=kd)
        elif p == 0:
            r = np.sum(xf != 0, axis=ax, keepdims=kd).astype(dt)
        else:
            with np.errstate(all="ignore"):
                r = np.power(np.sum(np.power(np.abs(xf), p), axis=ax, keepdims=kd), 1.0 / p)
    return _ret(r).astype(dt, copy=False)
