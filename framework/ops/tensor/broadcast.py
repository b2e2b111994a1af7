"""Broadcasting: broadcast_to (MXNet 1.x and NumPy rules), broadcast_like, broadcast_axis."""
from __future__ import annotations

import numpy as np

from ...base import ShapeError
from ..common import bshape, norm_axes
from ..attrs import Shape
from ..lowering import lowers
from ..registry import expose, register


def _bto_shape(a, s):
    src = tuple(s[0])
    tgt = tuple(a.shape)
    if len(tgt) < len(src):
        raise ShapeError(f"broadcast_to: cannot broadcast {src} to {tgt}")
    src_p = (1,) * (len(tgt) - len(src)) + src
    out = []
    for d, t in zip(src_p, tgt):
        t = d if t in (0, -1) else t
        if d != t and d != 1:
            raise ShapeError(f"broadcast_to: operands could not be broadcast together with "
                             f"remapped shapes [original->remapped]: {src} and requested shape {tgt}")
        out.append(t)
    return [tuple(out)]


@register("broadcast_to", attrs={"shape": Shape(())}, infer_shape=_bto_shape, strict=True)
def broadcast_to(a, x):
    """Broadcast to `shape` (MXNet 1.x: 0 / -1 keep the input dim)."""
    return np.broadcast_to(x, _bto_shape(a, [x.shape])[0])


def _np_bto_shape(a, s):
    """NumPy's rule, with MXNet's -2 for "keep the input dim" (0 is a real, empty dim)."""
    src, tgt = tuple(s[0]), list(a.shape)
    if len(tgt) < len(src):
        raise ShapeError(f"broadcast_to: cannot broadcast {src} to {tuple(a.shape)}")
    off = len(tgt) - len(src)
    for j, d in enumerate(src):
        if tgt[off + j] == -2:
            tgt[off + j] = d
        if d not in (1, tgt[off + j]):
            raise ShapeError(f"broadcast_to: shape {src} is not broadcastable to {tuple(a.shape)}")
    if any(t < 0 for t in tgt):
        raise ShapeError(f"broadcast_to: the target shape must be known, got {tuple(a.shape)}")
    return [tuple(tgt)]


@register("_npi_broadcast_to", attrs={"shape": Shape(())}, infer_shape=_np_bto_shape,
          strict=True)
def np_broadcast_to(a, x):
    """`np.broadcast_to`: NumPy's broadcasting to `shape` (-2 keeps the input dim)."""
    return np.broadcast_to(x, _np_bto_shape(a, [x.shape])[0])


def _blike_shape(a, s):
    lhs, rhs = tuple(s[0]), tuple(s[1])
    if a.lhs_axes is None and a.rhs_axes is None:
        return [bshape("broadcast_like", lhs, rhs)]
    la = norm_axes(a.lhs_axes, len(lhs), "broadcast_like")
    ra = norm_axes(a.rhs_axes, len(rhs), "broadcast_like")
    out = list(lhs)
    for i, j in zip(la, ra):
        out[i] = rhs[j]
    return [tuple(out)]


@register("broadcast_like", "_npx_broadcast_like", inputs=("lhs", "rhs"),
          attrs={"lhs_axes": Shape(None), "rhs_axes": Shape(None)},
          infer_shape=_blike_shape, strict=True)
def broadcast_like(a, x, y):
    return np.broadcast_to(x, _blike_shape(a, [x.shape, y.shape])[0])


def _baxis_shape(a, s):
    out = list(s[0])
    axes = norm_axes(a.axis, len(out), "broadcast_axis")
    sizes = tuple(a.size)
    if len(sizes) != len(axes):
        raise ShapeError("broadcast_axis: axis and size must have the same length")
    for ax, n in zip(axes, sizes):
        if out[ax] != 1:
            raise ShapeError(f"broadcast_axis: axis {ax} has size {out[ax]}, not 1")
        out[ax] = n
    return [tuple(out)]


@register("broadcast_axis", "broadcast_axes", attrs={"axis": Shape(()), "size": Shape(())},
          infer_shape=_baxis_shape, strict=True)
def broadcast_axis(a, x):
    return np.broadcast_to(x, _baxis_shape(a, [x.shape])[0])


# -- ONNX lowering ------------------------------------------------------------------------------


@lowers(broadcast_to)
def _broadcast_to_onnx(ctx, node, ins):
    tgt = [1 if t in (0, -1) else t for t in node.parsed.shape]   # Expand keeps dims under 1
    return ctx.op("Expand", [ins[0], ctx.ints(tgt)])


@lowers(np_broadcast_to)
def _np_broadcast_to_onnx(ctx, node, ins):
    tgt = [1 if t == -2 else t for t in node.parsed.shape]
    return ctx.op("Expand", [ins[0], ctx.ints(tgt)])


@lowers(broadcast_like)
def _broadcast_like_onnx(ctx, node, ins):
    a = node.parsed
    x, y = ins
    if a.lhs_axes is None and a.rhs_axes is None:
        return ctx.op("Expand", [x, ctx.shape_of(y)])
    r = ctx.rank(x)
    la = norm_axes(a.lhs_axes, r, "broadcast_like")
    ra = norm_axes(a.rhs_axes, ctx.rank(y), "broadcast_like")
    dims = {i: ctx.dim(y, j) for i, j in zip(la, ra)}
    shape = ctx.op("Concat", [dims.get(i) or ctx.ints([1]) for i in range(r)], axis=0)
    return ctx.op("Expand", [x, shape])


@lowers(broadcast_axis)
def _broadcast_axis_onnx(ctx, node, ins):
    r = ctx.rank(ins[0])
    tgt = [1] * r
    for ax, n in zip(norm_axes(node.parsed.axis, r, "broadcast_axis"), node.parsed.size):
        tgt[ax] = n
    return ctx.op("Expand", [ins[0], ctx.ints(tgt)])


# -- front-ends: the names framework.np / npx expose these operators under ---------------------
expose("_npi_broadcast_to", "np.broadcast_to")
