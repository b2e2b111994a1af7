"""Sorting and selection (sort, argsort, topk, nonzero) and triangular/diagonal helpers."""
from __future__ import annotations

import numpy as np

from ...base import OperatorError
from ..attrs import Bool, DType, Int, Str
from ..lowering import lowers
from ..registry import expose, register
from ..common import F32, I64, norm_axis


def _order(x, axis, ascend):
    if ascend:
        return np.argsort(x, axis=axis, kind="stable")
    if x.dtype.kind in "iu":
        return np.flip(np.argsort(x, axis=axis, kind="stable"), axis=axis)
    return np.argsort(-x if x.dtype.kind == "f" else np.negative(x.astype(np.float64)),
                      axis=axis, kind="stable")


def _flat_axis(a, x):
    if a.axis is None:
        return x.reshape(-1), 0
    return x, norm_axis(a.axis, x.ndim, "sort")


@register("sort", "_npi_sort", attrs={"axis": Int(-1), "is_ascend": Bool(True)},
          infer_shape=lambda a, s: [(int(np.prod(s[0])),) if a.axis is None else tuple(s[0])],
          strict=True)
def sort(a, x):
    x, ax = _flat_axis(a, x)
    r = np.sort(x, axis=ax, kind="stable")
    return r if a.is_ascend else np.flip(r, axis=ax).copy()


@register("argsort", "_npi_argsort", attrs={"axis": Int(-1), "is_ascend": Bool(True),
                                           "dtype": DType(F32)},
          infer_shape=lambda a, s: [(int(np.prod(s[0])),) if a.axis is None else tuple(s[0])],
          infer_type=lambda a, d: [a.dtype or F32], strict=True)
def argsort(a, x):
    x, ax = _flat_axis(a, x)
    return _order(x, ax, a.is_ascend).astype(a.dtype or F32)


def _topk_n(a):
    """MXNet 2.0: values come with their indices (hidden unless ret_typ is "both")."""
    return 2 if a.ret_typ in ("both", "value") else 1


def _topk_visible(a):
    return 2 if a.ret_typ == "both" else 1


def _topk_shape(a, s):
    s = tuple(s[0])
    if a.ret_typ == "mask":
        return [s]
    if a.axis is None:
        o = (a.k,)
    else:
        ax = norm_axis(a.axis, len(s), "topk")
        o = s[:ax] + (a.k,) + s[ax + 1:]
    return [o] * _topk_n(a)


def _topk_type(a, d):
    if a.ret_typ == "mask":
        return [d[0]]
    if a.ret_typ in ("both", "value"):
        return [d[0], a.dtype or F32]
    return [a.dtype or F32]


@register("topk", "_npx_topk", attrs={"axis": Int(-1), "k": Int(1),
                                     "ret_typ": Str("indices", choices=("value", "indices",
                                                                        "mask", "both")),
                                     "is_ascend": Bool(False), "dtype": DType(F32)},
          num_outputs=_topk_n, num_visible=_topk_visible, infer_shape=_topk_shape,
          infer_type=_topk_type, strict=True)
def topk(a, x):
    """The k largest (or smallest, is_ascend) values / indices / mask along `axis`."""
    src = x
    x, ax = _flat_axis(a, x)
    k = a.k if a.k > 0 else x.shape[ax]
    idx = np.take(_order(x, ax, a.is_ascend), np.arange(k), axis=ax)
    if a.ret_typ == "mask":
        m = np.zeros(x.shape, dtype=src.dtype)
        np.put_along_axis(m, idx, 1, axis=ax)
        return m.reshape(src.shape)
    vals = np.take_along_axis(x, idx, axis=ax)
    ind = idx.astype(a.dtype or F32)
    if a.ret_typ in ("value", "both"):
        return vals, ind
    return ind


@register("_npi_nonzero", "_npx_nonzero", infer_type=lambda a, d: [I64], shape_depends_on_data=True)
def nonzero(a, x):
    """(N, ndim) int64 coordinates of the non-zero entries; a 0-d array counts as 1-d, as
    MXNet (and NumPy 1.x) read it: (1, 1) or (0, 1)."""
    return np.argwhere(np.atleast_1d(x)).astype(I64)


def _diag_shape(a, s):
    x = tuple(s[0])
    if len(x) == 1:
        n = x[0] + abs(a.k)
        return [(n, n)]
    if len(x) != 2:
        raise OperatorError(f"diag: the input must be 1- or 2-d, got shape {x}")
    r, c = x
    return [(max(0, min(r, c - a.k) if a.k >= 0 else min(r + a.k, c)),)]


@register("_npi_diag", attrs={"k": Int(0)}, infer_shape=_diag_shape)
def diag(a, x):
    return np.diag(x, a.k).copy()


@register("_npi_tril", attrs={"k": Int(0)}, infer_shape=lambda a, s: [tuple(s[0])])
def tril(a, x):
    if x.ndim < 1:
        raise OperatorError("tril: the input must have at least one dimension")
    return np.tril(x, a.k)


@register("_npi_triu", attrs={"k": Int(0)}, infer_shape=lambda a, s: [tuple(s[0])])
def triu(a, x):
    if x.ndim < 1:
        raise OperatorError("triu: the input must have at least one dimension")
    return np.triu(x, a.k)


def _trace_shape(a, s):
    x = tuple(s[0])
    ax = {norm_axis(a.axis1, len(x), "trace"), norm_axis(a.axis2, len(x), "trace")}
    if len(ax) != 2:
        raise OperatorError("trace: axis1 and axis2 cannot be the same")
    return [tuple(d for i, d in enumerate(x) if i not in ax)]


@register("_npi_trace", attrs={"offset": Int(0), "axis1": Int(0), "axis2": Int(1)},
          infer_shape=_trace_shape)
def trace(a, x):
    return np.asarray(np.trace(x, a.offset, a.axis1, a.axis2, dtype=x.dtype))   # NumPy widens ints


# -- ONNX lowering ------------------------------------------------------------------------------


def _topk_onnx_core(ctx, x, axis, k, ascend):
    """(values, int64 indices) of ONNX TopK: ties keep the lower index first, as the kernel's
    stable sorts do (for float data)."""
    r = ctx.rank(x)
    if axis is None:
        x, ax = ctx.op("Reshape", [x, ctx.ints([-1])]), 0
        n = int(np.prod(ctx.shape(x)))
    else:
        ax = norm_axis(axis, r, "topk")
        n = ctx.shape(x)[ax]
    k = k if k > 0 else n
    return ctx.op("TopK", [x, ctx.ints([k])], n_out=2, axis=ax, largest=int(not ascend),
                  sorted=1), ax


@lowers(sort)
def _sort_onnx(ctx, node, ins):
    a = node.parsed
    (vals, _), _ = _topk_onnx_core(ctx, ins[0], a.axis, 0, a.is_ascend)
    return vals


@lowers(argsort)
def _argsort_onnx(ctx, node, ins):
    a = node.parsed
    (_, idx), _ = _topk_onnx_core(ctx, ins[0], a.axis, 0, a.is_ascend)
    return ctx.cast(idx, ctx.out_dtype())


@lowers(topk)
def _topk_onnx(ctx, node, ins):
    a = node.parsed
    x = ins[0]
    (vals, idx), ax = _topk_onnx_core(ctx, x, a.axis, a.k, a.is_ascend)
    if a.ret_typ == "mask":
        src = x if a.axis is not None else ctx.op("Reshape", [x, ctx.ints([-1])])
        ones = ctx.op("Expand", [ctx.const(np.ones(1, ctx.dtype(x))), ctx.shape_of(idx)])
        m = ctx.op("ScatterElements", [ctx.zeros_like(src), idx, ones], axis=ax)
        return ctx.op("Reshape", [m, ctx.shape_of(x)]) if a.axis is None else m
    ind = ctx.cast(idx, a.dtype or F32)
    if a.ret_typ == "value":
        return vals
    return [vals, ind] if a.ret_typ == "both" else ind


def _trilu_onnx(upper: int):
    def fn(ctx, node, ins):
        return ctx.op("Trilu", [ins[0], ctx.const(np.asarray(node.parsed.k, np.int64))],
                      upper=upper)
    return fn


lowers(tril)(_trilu_onnx(0))
lowers(triu)(_trilu_onnx(1))


# -- front-ends: the names framework.np / npx expose these operators under ---------------------
expose("_npi_nonzero", "np.nonzero")
expose("_npx_nonzero", "npx.nonzero(a)")
expose("_npi_trace", "np.trace")
for _fn in ("diag", "tril", "triu"):
    expose(f"_npi_{_fn}", f"np.{_fn}(" + ("v" if _fn == "diag" else "m") + ", k=0)")
