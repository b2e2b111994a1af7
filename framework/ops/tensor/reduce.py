"""Reductions: 1.x (`sum`, `mean`, `max`… with `exclude`, full reduction → shape (1,)) and 2.x
`_npi_*` (NumPy semantics: `axis=None` → all, `axis=()` → none, full reduction → shape ())."""
from __future__ import annotations

import numpy as np

from ...base import OperatorError
from .. import legacy_forms
from ..common import BOOL, F32, I64, ScalarAttr, is_float, norm_axes, norm_axis
from ..attrs import Bool, DType, Float, Int, IntOrTuple, Shape
from ..lowering import Unsupported, lowers, lowers_named, refuse_if
from ..registry import expose, register


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


def _axis_before_905(version: int, attrs: dict) -> None:
    """Before MXNet 0.9.5 an argmax/argmin axis of -1 meant "no axis"."""
    if version < 905 and attrs.get("axis") == "-1":
        del attrs["axis"]


for _name, _fn in [("argmax", np.argmax), ("argmin", np.argmin)]:
    _k, _s = _legacy_arg(_fn)
    register(_name, attrs={"axis": Int(None), "keepdims": Bool(False)}, infer_shape=_s,
             strict=True, upgrade=_axis_before_905)(_k)


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


def reduced_shape(shape, axis, keepdims: bool, op: str) -> tuple:
    """The shape NumPy's reductions give `shape` over `axis` (None: all axes)."""
    return _np_out_shape(shape, _np_axes(axis, len(shape), op), keepdims)


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
             infer_type=_t, strict=True,
             legacy=legacy_forms.reduction(_name[5:], (_aliases or (_name,))[0]))(_k)


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
    """std/var and, as MXNet 2.0's second (hidden) output, the mean they are taken about."""
    def kernel(a, x):
        axes = _np_axes(a.axis, x.ndim, "std")
        dt = _mean_dtype(a, x.dtype)
        xin = x if x.dtype == dt else x.astype(dt)
        with np.errstate(all="ignore"):
            mean = np.mean(xin, axis=axes, keepdims=True)
            out = fn(xin, axis=axes, ddof=a.ddof, keepdims=a.keepdims, mean=mean)
        if not a.keepdims:
            mean = mean.reshape(np.shape(out))
        return (_ret(out).astype(dt, copy=False), _ret(mean).astype(dt, copy=False))
    return kernel


def _stat_shape(name):
    one = _np_shape_fn(name)
    return lambda a, s: one(a, s) * 2


for _name, _fn in [("_npi_std", np.std), ("_npi_var", np.var)]:
    register(_name, attrs={"axis": IntOrTuple(None), "dtype": DType(None), "ddof": Int(0),
                           "keepdims": Bool(False)}, infer_shape=_stat_shape(_name),
             infer_type=lambda a, d: [_mean_dtype(a, d[0])] * 2, num_outputs=2, num_visible=1,
             strict=True)(_stat(_fn))


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


def _norm_hidden_shapes(a, shape) -> list[tuple]:
    """MXNet 2.0's three hidden outputs of `_npi_norm` (its backward workspace): the SVD
    factors UT, L, V for a matrix 2-norm, the partial sums for another matrix norm, empty
    otherwise. Only their count and shapes matter here (the graph's entry numbering)."""
    empty = [(0, 0, 0), (0, 0), (0, 0, 0)]
    nd = len(shape)
    if a.axis is None:
        if a.flag == -2 or nd < 2:
            return empty
        axes = (nd - 2, nd - 1)
    else:
        axes = _np_axes(a.axis, nd, "norm")
        if len(axes) != 2:
            return empty
    rows, cols = shape[axes[0]], shape[axes[1]]
    batch = int(np.prod([d for i, d in enumerate(shape) if i not in axes]))
    if a.ord in (2, -2):
        return [(batch, rows, rows), (batch, min(rows, cols)), (batch, rows, cols)]
    k = axes[0] if a.ord in (1, -1) else axes[1]
    kept = [1 if i == k else d for i, d in enumerate(shape)]
    return [(int(np.prod(kept[:k])), 1, int(np.prod(kept[k + 1:]))), (0, 0), (0, 0, 0)]


def _npnorm_shape(a, s):
    out = _np_out_shape(s[0], _np_axes(a.axis, len(s[0]), "norm"), a.keepdims)
    return [out, *_norm_hidden_shapes(a, tuple(s[0]))]


def _npnorm_type(a, d):
    return [d[0] if is_float(d[0]) else F32] * 4


@register("_npi_norm", attrs={"ord": ScalarAttr(2.0), "axis": IntOrTuple(None), "keepdims": Bool(False),
                              "flag": Int(-1)},
          infer_shape=_npnorm_shape, infer_type=_npnorm_type, num_outputs=4, num_visible=1,
          strict=True, legacy=legacy_forms.norm)
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
    # the hidden outputs are MXNet's backward workspace, read by nothing here: zeros
    hidden = tuple(np.zeros(s, dt) for s in _norm_hidden_shapes(a, x.shape))
    return (_ret(r).astype(dt, copy=False), *hidden)


# -- ONNX lowering ------------------------------------------------------------------------------

_ONNX_REDUCE = {"sum": "ReduceSum", "mean": "ReduceMean", "prod": "ReduceProd",
                "max": "ReduceMax", "min": "ReduceMin", "nansum": "ReduceSum",
                "nanprod": "ReduceProd"}


def _reduce_onnx(ctx, kind: str, x: str, axes, keepdims: bool, rank: int) -> str:
    """ONNX Reduce* over `axes` of a rank-`rank` x, reshaped to the op's output shape where
    that differs (1.x's full reduction gives (1,))."""
    if not axes:
        return ctx.op("Identity", [x])
    y = ctx.op(kind, [x, ctx.ints(axes)], keepdims=int(keepdims))
    if keepdims or len(ctx.out_shape()) == rank - len(axes):
        return y
    return ctx.op("Reshape", [y, ctx.reshape_target()])


def _nan_to(ctx, x, value):
    return ctx.op("Where", [ctx.op("IsNaN", [x]), ctx.scalar(value, x), x])


def _legacy_reduce_onnx(name: str):
    def fn(ctx, node, ins):
        a = node.parsed
        x = ins[0]
        if name in ("nansum", "nanprod"):
            x = _nan_to(ctx, x, 0 if name == "nansum" else 1)
        axes = _legacy_axes(a, ctx.rank(ins[0]), name)
        return _reduce_onnx(ctx, _ONNX_REDUCE[name], x, axes, a.keepdims, ctx.rank(ins[0]))
    return fn


for _name in _ONNX_REDUCE:
    lowers_named(_name)(_legacy_reduce_onnx(_name))


def _np_reduce_onnx(kind: str, initial_op: str | None):
    def fn(ctx, node, ins):
        a = node.parsed
        x = ctx.cast(ins[0], ctx.out_dtype())
        r = ctx.rank(ins[0])
        y = _reduce_onnx(ctx, kind, x, _np_axes(a.axis, r, "reduce"), a.keepdims, r)
        init = getattr(a, "initial", None)
        if init is not None and initial_op is not None:
            y = ctx.op(initial_op, [y, ctx.const(np.asarray(init, ctx.out_dtype()))])
        return y
    return fn


for _name, _kind, _init in [("_npi_sum", "ReduceSum", "Add"), ("_npi_prod", "ReduceProd", "Mul"),
                            ("_npi_mean", "ReduceMean", None), ("_npi_max", "ReduceMax", "Max"),
                            ("_npi_min", "ReduceMin", "Min")]:
    lowers_named(_name)(_np_reduce_onnx(_kind, _init))


def _arg_onnx(kind: str, legacy: bool):
    def fn(ctx, node, ins):
        a = node.parsed
        x = ins[0]
        if a.axis is None:
            y = ctx.op(kind, [ctx.op("Reshape", [x, ctx.ints([-1])])], axis=0, keepdims=1)
            y = ctx.op("Reshape", [y, ctx.reshape_target()])
        else:
            y = ctx.op(kind, [x], axis=norm_axis(a.axis, ctx.rank(x), "argmax"),
                       keepdims=int(a.keepdims))
            if not a.keepdims and ctx.rank(x) == 1 and ctx.out_shape():
                y = ctx.op("Reshape", [y, ctx.reshape_target()])
        return ctx.cast(y, ctx.out_dtype()) if legacy else y
    return fn


lowers_named("argmax")(_arg_onnx("ArgMax", True))
lowers_named("argmin")(_arg_onnx("ArgMin", True))
lowers_named("_npi_argmax")(_arg_onnx("ArgMax", False))
lowers_named("_npi_argmin")(_arg_onnx("ArgMin", False))


@lowers(argmax_channel)
def _argmax_channel_onnx(ctx, node, ins):
    y = ctx.op("ArgMax", [ctx.op("Flatten", ins, axis=1)], axis=1, keepdims=0)
    return ctx.cast(y, ctx.out_dtype())


def _centered_square_mean(ctx, x, axes, keepdims):
    m = ctx.op("ReduceMean", [x, ctx.ints(axes)], keepdims=1)
    d = ctx.op("Sub", [x, m])
    return m, ctx.op("ReduceMean", [ctx.op("Mul", [d, d]), ctx.ints(axes)],
                     keepdims=int(keepdims))


@lowers(moments)
def _moments_onnx(ctx, node, ins):
    a = node.parsed
    r = ctx.rank(ins[0])
    axes = list(range(r)) if a.axes is None else list(norm_axes(a.axes, r, "moments"))
    m, v = _centered_square_mean(ctx, ins[0], axes, a.keepdims)
    shape = ctx.reshape_target(0)
    return [ctx.op("Reshape", [m, shape]), ctx.op("Reshape", [v, shape])]


def _std_var_onnx(is_std: bool):
    def fn(ctx, node, ins):
        a = node.parsed
        x = ctx.cast(ins[0], ctx.out_dtype())
        shape = ctx.shape(ins[0])
        axes = list(_np_axes(a.axis, len(shape), "std"))
        if a.ddof and set(axes) & set(ctx.varying(ins[0])):
            raise Unsupported("ddof over an axis that follows the batch")
        _, v = _centered_square_mean(ctx, x, axes, a.keepdims)
        n = int(np.prod([shape[i] for i in axes]))
        if a.ddof:
            v = ctx.op("Mul", [v, ctx.const(np.asarray(n / (n - a.ddof), ctx.out_dtype()))])
        return ctx.op("Sqrt", [v]) if is_std else v
    return fn


lowers_named("_npi_std")(_std_var_onnx(True))
lowers_named("_npi_var")(_std_var_onnx(False))


@lowers(norm_legacy, check=refuse_if(norm_order_other_than_1_or_2=lambda a: a.ord not in (1, 2)))
def _norm_legacy_onnx(ctx, node, ins):
    a = node.parsed
    r = ctx.rank(ins[0])
    axes = list(range(r)) if a.axis is None else list(norm_axes(a.axis, r, "norm"))
    y = _reduce_onnx(ctx, "ReduceL1" if a.ord == 1 else "ReduceL2", ins[0], axes, a.keepdims, r)
    return ctx.cast(y, ctx.out_dtype())


def _np_norm_kind(a) -> str | None:
    if a.flag in (-2, 1) or (a.flag == -1 and a.ord == 2):
        return "ReduceL2"
    if a.flag == -1 and a.ord == 1:
        return "ReduceL1"
    if a.flag == -1 and a.ord == np.inf:
        return "inf"
    return None


@lowers(np_norm, check=refuse_if(matrix_or_general_p_norm=lambda a: _np_norm_kind(a) is None))
def _np_norm_onnx(ctx, node, ins):
    a = node.parsed
    x = ctx.cast(ins[0], ctx.out_dtype())
    r = ctx.rank(ins[0])
    axes = list(_np_axes(a.axis, r, "norm"))
    kind = _np_norm_kind(a)
    if kind == "inf":
        return _reduce_onnx(ctx, "ReduceMax", ctx.op("Abs", [x]), axes, a.keepdims, r)
    return _reduce_onnx(ctx, kind, x, axes, a.keepdims, r)


@lowers(cumsum)
def _cumsum_onnx(ctx, node, ins):
    a = node.parsed
    x = ctx.cast(ins[0], ctx.out_dtype())
    if a.axis is None:
        x, axis = ctx.op("Reshape", [x, ctx.ints([-1])]), 0
    else:
        axis = norm_axis(a.axis, ctx.rank(ins[0]), "cumsum")
    return ctx.op("CumSum", [x, ctx.const(np.asarray(axis, np.int64))])


def _anyall_onnx(kind: str):
    def fn(ctx, node, ins):
        a = node.parsed
        x = ctx.cast(ctx.cast(ins[0], BOOL), np.float32)
        r = ctx.rank(ins[0])
        y = _reduce_onnx(ctx, kind, x, _np_axes(a.axis, r, "any"), a.keepdims, r)
        return ctx.op("Cast", [y], to=ctx.tensor_type(BOOL))
    return fn


# any: a sum of 0/1 (ReduceMax of an empty axis is the type's lowest value, -inf: True once
# cast); all: ReduceMin, whose empty value (+inf or the highest value) is True as it should be
lowers_named("_npi_any")(_anyall_onnx("ReduceSum"))
lowers_named("_npi_all")(_anyall_onnx("ReduceMin"))


# -- front-ends: the names framework.np / npx expose these operators under ---------------------
for _fn in ("sum", "prod", "mean", "max", "min", "std", "var", "argmax", "argmin", "cumsum",
            "all", "any"):
    expose(f"_npi_{_fn}", f"np.{_fn}")
expose("_npi_norm", "np.linalg.norm")
