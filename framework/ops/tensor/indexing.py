"""Slicing and gathering: slice, slice_axis, slice_like, Crop, take, pick, one_hot, gather_nd,
where (1.x and `_npi_where*`), clip, boolean_mask."""
from __future__ import annotations

import numpy as np

from ...base import OperatorError, ShapeError
from .._kernels import epilogue as _epilogue
from ..common import F32, ScalarAttr, bshape, norm_axis, result_dtype, same_shape
from ..attrs import Bool, DType, Float, Int, Shape, Str
from ..lowering import lowers
from ..registry import expose, register


def _ret(r):
    return r if type(r) is np.ndarray else np.asarray(r)


def _opt(v, k):
    if v is None or k >= len(v):
        return None
    return v[k]


def _slice_range(b, e, s, n, op="slice"):
    """MXNet's begin/end/step normalisation for one axis (GetIndexRange) → a Python slice."""
    s = 1 if s is None else s
    if s == 0:
        raise OperatorError(f"{op}: slice step cannot be 0")
    if n == 0:
        return slice(0, 0, 1)
    e_given = e is not None
    b = (n - 1 if s < 0 else 0) if b is None else b
    e = (-1 if s < 0 else n) if e is None else e
    if b < 0:
        b += n
    if e < 0 and e_given:
        e += n
    if b < 0 and s > 0:
        b = 0
    if b > n - 1 and s < 0:
        b = n - 1
    if b < 0 or b > n - 1:
        return slice(0, 0, 1)
    e = min(max(e, -1), n)
    if s > 0:
        return slice(b, max(e, b), s)
    return slice(b, None if e < 0 else min(e, b), s)


def _slice_key(a, shape):
    nb = len(a.begin)
    if a.end is not None and len(a.end) != nb:
        raise ShapeError("slice: begin and end must have the same length")
    if nb > len(shape):
        raise ShapeError(f"slice: {nb} begin values for a {len(shape)}-d input")
    return tuple(_slice_range(_opt(a.begin, k), _opt(a.end, k), _opt(a.step, k), shape[k])
                 for k in range(nb))


def _sliced_shape(key, shape):
    out = []
    for k, n in enumerate(shape):
        if k < len(key):
            out.append(len(range(*key[k].indices(n))))
        else:
            out.append(n)
    return tuple(out)


@register("slice", "crop", "_npi_slice", attrs={"begin": Shape(), "end": Shape(),
                                                "step": Shape(())},
          infer_shape=lambda a, s: [_sliced_shape(_slice_key(a, s[0]), s[0])], strict=True)
def slice_(a, x):
    """x[begin:end:step] on the leading len(begin) axes (None entries = whole axis)."""
    return x[_slice_key(a, x.shape)]


def _sa_key(a, shape):
    ax = norm_axis(a.axis, len(shape), "slice_axis")
    key = [slice(None)] * len(shape)
    key[ax] = _slice_range(a.begin, a.end, 1, shape[ax], "slice_axis")
    return tuple(key)


@register("slice_axis", "_npx_slice_axis", attrs={"axis": Int(), "begin": Int(),
                                                  "end": Int(None)},
          infer_shape=lambda a, s: [_sliced_shape(_sa_key(a, s[0]), s[0])], strict=True)
def slice_axis(a, x):
    return x[_sa_key(a, x.shape)]


def _sl_key(a, shape, like):
    axes = range(min(len(shape), len(like))) if not a.axes else \
        [norm_axis(ax, len(shape), "slice_like") for ax in a.axes]
    key = [slice(None)] * len(shape)
    for ax in axes:
        if like[ax] > shape[ax]:
            raise ShapeError(f"slice_like: axis {ax}: {like[ax]} exceeds input size {shape[ax]}")
        key[ax] = slice(0, like[ax])
    return tuple(key)


@register("slice_like", "_npx_slice_like", inputs=("data", "shape_like"),
          attrs={"axes": Shape(())},
          infer_shape=lambda a, s: [_sliced_shape(_sl_key(a, s[0], s[1]), s[0])], strict=True)
def slice_like(a, x, like):
    return x[_sl_key(a, x.shape, like.shape)]


def _crop_key(a, shapes):
    x = shapes[0]
    if a.num_args > 1:
        h, w = shapes[1][2], shapes[1][3]
    else:
        h, w = a.h_w
    if a.center_crop:
        oy, ox = (x[2] - h) // 2, (x[3] - w) // 2
    else:
        oy, ox = a.offset
    if oy + h > x[2] or ox + w > x[3]:
        raise ShapeError(f"Crop: crop ({h}, {w}) at offset ({oy}, {ox}) exceeds input {tuple(x)}")
    return (slice(None), slice(None), slice(oy, oy + h), slice(ox, ox + w))


@register("Crop", attrs={"num_args": Int(), "offset": Shape((0, 0)), "h_w": Shape((0, 0)),
                         "center_crop": Bool(False)},
          inputs=lambda a: ["data"] + ["crop_like"] * (a.num_args - 1),
          infer_shape=lambda a, s: [_sliced_shape(_crop_key(a, s), s[0])], strict=True)
def crop(a, x, *like):
    """Crop the last two axes of NCHW data to h_w (or the like input's H, W) at offset."""
    return x[_crop_key(a, [x.shape] + [y.shape for y in like])]


# -- gather -------------------------------------------------------------------------------------
def _take_idx(idx, n, mode):
    idx = idx.astype(np.int64) if idx.dtype.kind != "i" else idx
    if mode == "wrap":
        return np.mod(idx, n) if n else idx
    if mode == "raise":
        if idx.size and (idx.min() < -n or idx.max() >= n):
            raise OperatorError(f"take: index out of range for axis of size {n}")
        return idx
    return np.clip(idx, 0, n - 1)


def _take_shape(a, s):
    d, i = s
    ax = norm_axis(a.axis, len(d), "take")
    return [tuple(d[:ax]) + tuple(i) + tuple(d[ax + 1:])]


@register("take", "_npi_take", inputs=("a", "indices"),
          attrs={"axis": Int(0), "mode": Str("clip", choices=("clip", "wrap", "raise"))},
          infer_shape=_take_shape, strict=True)
def take(a, x, idx):
    """Gather along `axis`; float indices are truncated; mode clip/wrap/raise."""
    ax = norm_axis(a.axis, x.ndim, "take")
    return np.take(x, _take_idx(idx, x.shape[ax], a.mode), axis=ax)


def _pick_shape(a, s):
    d = s[0]
    if a.axis is None:
        return [(1,)] if not a.keepdims else [(1,) * len(d)]
    ax = norm_axis(a.axis, len(d), "pick")
    return [tuple(1 if i == ax else n for i, n in enumerate(d)) if a.keepdims
            else tuple(n for i, n in enumerate(d) if i != ax)]


@register("pick", "_npx_pick", inputs=("data", "index"),
          attrs={"axis": Int(-1), "keepdims": Bool(False),
                 "mode": Str("clip", choices=("clip", "wrap"))},
          infer_shape=_pick_shape, strict=True)
def pick(a, x, idx):
    """out[i, j] = x[i, index[i, j], j] along `axis` (index has the other axes)."""
    if a.axis is None:
        flat = x.reshape(-1)
        i = _take_idx(idx.reshape(-1), flat.size, a.mode)
        return flat[i[:1]]
    ax = norm_axis(a.axis, x.ndim, "pick")
    i = _take_idx(idx, x.shape[ax], a.mode)
    i = np.expand_dims(i.reshape(tuple(n for k, n in enumerate(x.shape) if k != ax)), ax)
    out = np.take_along_axis(x, i, axis=ax)
    return out if a.keepdims else np.squeeze(out, axis=ax)


@register("one_hot", "_npx_one_hot", inputs=("indices",),
          attrs={"depth": Int(), "on_value": Float(1.0), "off_value": Float(0.0),
                 "dtype": DType(F32)},
          infer_shape=lambda a, s: [tuple(s[0]) + (a.depth,)],
          infer_type=lambda a, d: [a.dtype or F32], strict=True)
def one_hot(a, idx):
    """One-hot encode (indices out of range give an all-off row)."""
    i = idx.astype(np.int64)
    out = np.full(idx.shape + (a.depth,), a.off_value, dtype=a.dtype or F32)
    valid = (i >= 0) & (i < a.depth)
    np.put_along_axis(out, np.where(valid, i, 0)[..., None],
                      np.where(valid, a.on_value, a.off_value)[..., None].astype(out.dtype), -1)
    return out


def _gnd_shape(a, s):
    d, i = s
    return [tuple(i[1:]) + tuple(d[i[0]:])]


@register("gather_nd", "_npi_gather_nd", inputs=("data", "indices"), infer_shape=_gnd_shape)
def gather_nd(a, x, idx):
    """out[i…] = x[idx[0, i…], idx[1, i…], …]."""
    i = idx.astype(np.int64)
    return _ret(x[tuple(i[k] for k in range(i.shape[0]))])


@register("_npi_boolean_mask", "_contrib_boolean_mask", inputs=("data", "index"),
          attrs={"axis": Int(0)}, shape_depends_on_data=True)
def boolean_mask(a, x, mask):
    return np.compress(mask.reshape(-1).astype(bool), x, axis=a.axis)


# -- where / clip --------------------------------------------------------------------------------
def _where_legacy_shape(a, s):
    c, x, y = s
    if tuple(x) != tuple(y):
        raise ShapeError(f"where: x {tuple(x)} and y {tuple(y)} must have the same shape")
    if tuple(c) != tuple(x) and (len(c) != 1 or c[0] != x[0]):
        raise ShapeError(f"where: condition {tuple(c)} must match x {tuple(x)} or be 1-D of "
                         f"length {x[0]}")
    return [tuple(x)]


@register("where", inputs=("condition", "x", "y"), infer_shape=_where_legacy_shape,
          infer_type=lambda a, d: [result_dtype(d[1], d[2])])
def where_legacy(a, c, x, y):
    """1.x where: condition of x's shape, or 1-D selecting whole rows."""
    if c.shape != x.shape:
        c = c.reshape(c.shape + (1,) * (x.ndim - 1))
    return _ret(np.where(c != 0, x, y))


@register("_npi_where", inputs=("condition", "x", "y"),
          infer_shape=lambda a, s: [bshape("where", *s)],
          infer_type=lambda a, d: [result_dtype(d[1], d[2])])
def where(a, c, x, y):
    """np.where with broadcasting."""
    dt = result_dtype(x.dtype, y.dtype)
    return _ret(np.where(c.astype(bool, copy=False), x, y).astype(dt, copy=False))


@register("_npi_where_lscalar", inputs=("condition", "x"), attrs={"scalar": ScalarAttr(0.0)},
          infer_shape=lambda a, s: [bshape("where", *s)], infer_type=lambda a, d: [d[1]])
def where_lscalar(a, c, y):
    """where(cond, scalar, y)."""
    return _ret(np.where(c.astype(bool, copy=False), y.dtype.type(a.scalar), y))


@register("_npi_where_rscalar", inputs=("condition", "x"), attrs={"scalar": ScalarAttr(0.0)},
          infer_shape=lambda a, s: [bshape("where", *s)], infer_type=lambda a, d: [d[1]])
def where_rscalar(a, c, x):
    """where(cond, x, scalar)."""
    return _ret(np.where(c.astype(bool, copy=False), x, x.dtype.type(a.scalar)))


@register("_npi_where_scalar2", inputs=("condition",),
          attrs={"x": ScalarAttr(0.0), "y": ScalarAttr(0.0)}, infer_shape=same_shape,
          infer_type=lambda a, d: [F32])
def where_scalar2(a, c):
    return _ret(np.where(c.astype(bool, copy=False), np.float32(a.x), np.float32(a.y)))


@register("clip", "_npi_clip", attrs={"a_min": ScalarAttr(None), "a_max": ScalarAttr(None)},
          infer_shape=same_shape, strict=True, out=True, elementwise=True, inplace=True,
          epilogue=_epilogue.clip)
def clip(a, x, out=None):
    """Clamp into [a_min, a_max]."""
    lo = -np.inf if a.a_min is None else a.a_min
    hi = np.inf if a.a_max is None else a.a_max
    if x.dtype.kind in "iub":
        info = np.iinfo(x.dtype) if x.dtype.kind != "b" else None
        if info is not None:
            lo, hi = int(max(lo, info.min)), int(min(hi, info.max))
    else:
        lo, hi = x.dtype.type(lo), x.dtype.type(hi)
    if out is not None:
        return np.clip(x, lo, hi, out=out)
    return _ret(np.clip(x, lo, hi))


# -- ONNX lowering ------------------------------------------------------------------------------


@lowers(clip)
def _clip_onnx(ctx, node, ins):
    a = node.parsed
    x = ins[0]
    dt = ctx.dtype(x)
    conv = float if dt.kind == "f" else int
    lo = "" if a.a_min is None else ctx.const(np.asarray(conv(a.a_min), dt), hint="lo")
    hi = "" if a.a_max is None else ctx.const(np.asarray(conv(a.a_max), dt), hint="hi")
    return ctx.op("Clip", [x, lo, hi])


_I64_MIN, _I64_MAX = int(np.iinfo(np.int64).min), int(np.iinfo(np.int64).max)


def _onnx_bounds(b, e, s, varying: bool, n: int):
    """ONNX Slice (start, end) of one axis: MXNet's normalisation at the static size, or (an
    axis that follows the batch) the raw bounds, which ONNX clamps as Python does."""
    s = 1 if s is None else s
    if not varying:
        sl = _slice_range(b, e, s, n)
        start, stop, _ = sl.indices(n) if sl.stop is not None else (sl.start, None, s)
        return start, (_I64_MIN if stop is None or stop < 0 else stop)
    start = (0 if s > 0 else -1) if b is None else b
    stop = (_I64_MAX if s > 0 else _I64_MIN) if e is None else e
    return start, stop


def _slice_onnx_axes(ctx, x, specs) -> str:
    """specs: (axis, begin, end, step) in MXNet's terms."""
    shape, vary = ctx.shape(x), ctx.varying(x)
    starts, ends, axes, steps = [], [], [], []
    for ax, b, e, s in specs:
        st, en = _onnx_bounds(b, e, s, ax in vary, shape[ax])
        starts.append(st)
        ends.append(en)
        axes.append(ax)
        steps.append(1 if s is None else s)
    if not axes:
        return ctx.op("Identity", [x])
    return ctx.op("Slice", [x, ctx.ints(starts), ctx.ints(ends), ctx.ints(axes), ctx.ints(steps)])


@lowers(slice_)
def _slice_onnx(ctx, node, ins):
    a = node.parsed
    return _slice_onnx_axes(ctx, ins[0], [(k, _opt(a.begin, k), _opt(a.end, k), _opt(a.step, k))
                                          for k in range(len(a.begin))])


@lowers(slice_axis)
def _slice_axis_onnx(ctx, node, ins):
    a = node.parsed
    ax = norm_axis(a.axis, ctx.rank(ins[0]), "slice_axis")
    return _slice_onnx_axes(ctx, ins[0], [(ax, a.begin, a.end, 1)])


@lowers(slice_like)
def _slice_like_onnx(ctx, node, ins):
    a = node.parsed
    x, like = ins
    r = min(ctx.rank(x), ctx.rank(like))
    axes = list(range(r)) if not a.axes else [norm_axis(ax, ctx.rank(x), "slice_like")
                                              for ax in a.axes]
    ends = ctx.op("Concat", [ctx.dim(like, ax) for ax in axes], axis=0)
    return ctx.op("Slice", [x, ctx.ints([0] * len(axes)), ends, ctx.ints(axes)])


@lowers(crop)
def _crop_onnx(ctx, node, ins):
    key = _crop_key(node.parsed, [ctx.shape(v) for v in ins])
    return ctx.op("Slice", [ins[0], ctx.ints([key[2].start, key[3].start]),
                            ctx.ints([key[2].stop, key[3].stop]), ctx.ints([2, 3])])


def _index_onnx(ctx, idx: str, n: int, mode: str) -> str:
    """int64 indices as `_take_idx` makes them (truncated; clipped or wrapped)."""
    i = ctx.op("Cast", [idx], to=ctx.tensor_type(np.int64))
    if mode == "wrap":
        return ctx.op("Mod", [i, ctx.const(np.asarray(n, np.int64))])
    if mode == "clip":
        return ctx.op("Clip", [i, ctx.const(np.asarray(0, np.int64)),
                               ctx.const(np.asarray(n - 1, np.int64))])
    return i


@lowers(take)
def _take_onnx(ctx, node, ins):
    a = node.parsed
    ax = norm_axis(a.axis, ctx.rank(ins[0]), "take")
    i = _index_onnx(ctx, ins[1], ctx.shape(ins[0])[ax], a.mode)
    return ctx.op("Gather", [ins[0], i], axis=ax)


@lowers(pick)
def _pick_onnx(ctx, node, ins):
    a = node.parsed
    x = ins[0]
    if a.axis is None:
        flat = ctx.op("Reshape", [x, ctx.ints([-1])])
        i = _index_onnx(ctx, ctx.op("Reshape", [ins[1], ctx.ints([-1])]),
                        int(np.prod(ctx.shape(x))), a.mode)
        return ctx.op("Gather", [flat, ctx.op("Slice", [i, ctx.ints([0]), ctx.ints([1])])])
    ax = norm_axis(a.axis, ctx.rank(x), "pick")
    i = _index_onnx(ctx, ins[1], ctx.shape(x)[ax], a.mode)
    shape = [0 if k < ax else d for k, d in enumerate(ctx.shape(x)) if k != ax]
    i = ctx.op("Reshape", [i, ctx.ints(shape)]) if ctx.rank(ins[1]) != len(shape) else i
    y = ctx.op("GatherElements", [x, ctx.op("Unsqueeze", [i, ctx.ints([ax])])], axis=ax)
    return y if a.keepdims else ctx.op("Squeeze", [y, ctx.ints([ax])])


@lowers(one_hot)
def _one_hot_onnx(ctx, node, ins):
    a = node.parsed
    i = ctx.op("Cast", [ins[0]], to=ctx.tensor_type(np.int64))
    depth = ctx.const(np.asarray(a.depth, np.int64))
    i = ctx.op("Where", [ctx.op("Less", [i, ctx.const(np.asarray(0, np.int64))]), depth, i])
    values = ctx.const(np.asarray([a.off_value, a.on_value], a.dtype or F32))
    return ctx.op("OneHot", [i, depth, values], axis=-1)


@lowers(gather_nd)
def _gather_nd_onnx(ctx, node, ins):
    r = ctx.rank(ins[1])
    i = ctx.op("Cast", [ins[1]], to=ctx.tensor_type(np.int64))
    i = ctx.op("Transpose", [i], perm=list(range(1, r)) + [0])
    return ctx.op("GatherND", [ins[0], i])


def _bool(ctx, c):
    return ctx.op("Cast", [c], to=ctx.tensor_type(np.bool_)) if ctx.dtype(c) != np.bool_ else c


@lowers(where_legacy)
def _where_legacy_onnx(ctx, node, ins):
    c, x, y = ins
    dt = ctx.out_dtype()
    cond = _bool(ctx, c)
    if ctx.rank(c) != ctx.rank(x):
        cond = ctx.op("Unsqueeze", [cond, ctx.ints(range(1, ctx.rank(x)))])
    return ctx.op("Where", [cond, ctx.cast(x, dt), ctx.cast(y, dt)])


@lowers(where)
def _where_onnx(ctx, node, ins):
    dt = ctx.out_dtype()
    return ctx.op("Where", [_bool(ctx, ins[0]), ctx.cast(ins[1], dt), ctx.cast(ins[2], dt)])


@lowers(where_lscalar)
def _where_lscalar_onnx(ctx, node, ins):
    s = ctx.const(np.asarray(node.parsed.scalar, ctx.dtype(ins[1])))
    return ctx.op("Where", [_bool(ctx, ins[0]), s, ins[1]])


@lowers(where_rscalar)
def _where_rscalar_onnx(ctx, node, ins):
    s = ctx.const(np.asarray(node.parsed.scalar, ctx.dtype(ins[1])))
    return ctx.op("Where", [_bool(ctx, ins[0]), ins[1], s])


@lowers(where_scalar2)
def _where_scalar2_onnx(ctx, node, ins):
    a = node.parsed
    return ctx.op("Where", [_bool(ctx, ins[0]), ctx.const(np.float32(a.x)),
                            ctx.const(np.float32(a.y))])


@lowers(boolean_mask)
def _boolean_mask_onnx(ctx, node, ins):
    m = _bool(ctx, ctx.op("Reshape", [ins[1], ctx.ints([-1])]))
    return ctx.op("Compress", [ins[0], m], axis=node.parsed.axis)


# -- front-ends: the names framework.np / npx expose these operators under ---------------------
expose("_npi_where", "np.where")
expose("_npi_where_lscalar", "np.where:lscalar")    # a number for x
expose("_npi_where_rscalar", "np.where:rscalar")    # a number for y
expose("_npi_where_scalar2", "np.where:scalar2")    # numbers for both
expose("_npi_boolean_mask", "np.ndarray.__getitem__:mask")   # x[bool array]
expose("pick", "npx.pick(data, index, axis=-1, mode='clip', keepdims=False)")
expose("gather_nd", "npx.gather_nd(data, indices)")
