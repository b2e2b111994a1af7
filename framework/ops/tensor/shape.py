"""Axis manipulation: transpose, SwapAxis, moveaxis, expand_dims, squeeze, Concat, stack, tile,
repeat, flip, split (SliceChannel, _split_v2); broadcasting is in broadcast.py."""
from __future__ import annotations

import numpy as np

from ...base import OperatorError, ShapeError
from .. import legacy_forms
from ..common import norm_axes, norm_axis
from ..attrs import Bool, Int, IntOrTuple, Shape
from ..lowering import lowers
from ..registry import expose, register


def _ret(r):
    return r if type(r) is np.ndarray else np.asarray(r)


# -- transpose ----------------------------------------------------------------------------------
def _perm(a, ndim):
    if a.axes is None or len(a.axes) == 0:
        return tuple(range(ndim - 1, -1, -1))
    if len(a.axes) != ndim:
        raise ShapeError(f"transpose: axes {tuple(a.axes)} do not match array of dimension {ndim}")
    return norm_axes(a.axes, ndim, "transpose")


def _tr_shape(a, s):
    return [tuple(s[0][i] for i in _perm(a, len(s[0])))]


@register("_npi_transpose", "transpose", "_np_transpose", attrs={"axes": Shape(None)},
          infer_shape=_tr_shape, strict=True)
def transpose(a, x):
    """Permute axes (reverse them when `axes` is empty / None)."""
    return x.transpose(_perm(a, x.ndim))


def _swap_shape(a, s):
    s = list(s[0])
    d1, d2 = norm_axis(a.dim1, len(s)), norm_axis(a.dim2, len(s))
    s[d1], s[d2] = s[d2], s[d1]
    return [tuple(s)]


@register("SwapAxis", "swapaxes", "_npi_swapaxes", attrs={"dim1": Int(0), "dim2": Int(0)},
          infer_shape=_swap_shape, strict=True, profiler_scope=True)
def swapaxis(a, x):
    return np.swapaxes(x, a.dim1, a.dim2)


def _moveaxis_perm(a, ndim):
    src = norm_axes(a.source, ndim, "moveaxis")
    dst = norm_axes(a.destination, ndim, "moveaxis")
    if len(src) != len(dst):
        raise OperatorError("moveaxis: source and destination must have the same length")
    order = [n for n in range(ndim) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return tuple(order)


@register("_npi_moveaxis", attrs={"source": Shape(), "destination": Shape()},
          infer_shape=lambda a, s: [tuple(s[0][i] for i in _moveaxis_perm(a, len(s[0])))],
          strict=True, legacy=legacy_forms.moveaxis)
def moveaxis(a, x):
    return x.transpose(_moveaxis_perm(a, x.ndim))


# -- expand / squeeze ---------------------------------------------------------------------------
def _expand_shape(a, s):
    s = tuple(s[0])
    ax = a.axis + len(s) + 1 if a.axis < 0 else a.axis
    if not 0 <= ax <= len(s):
        raise ShapeError(f"expand_dims: axis {a.axis} out of range for {len(s)}-d input")
    return [s[:ax] + (1,) + s[ax:]]


@register("expand_dims", "_npi_expand_dims", "_np_expand_dims", attrs={"axis": Int()},
          infer_shape=_expand_shape, strict=True)
def expand_dims(a, x):
    return x.reshape(_expand_shape(a, [x.shape])[0])


def _squeeze_shape(a, s):
    s = tuple(s[0])
    if a.axis is None:
        return [tuple(d for d in s if d != 1)]
    if not s and a.axis in (0, -1, (0,), (-1,)):   # NumPy/MXNet squeeze a 0-d array along 0/-1
        return [()]
    axes = norm_axes(a.axis if isinstance(a.axis, tuple) else (a.axis,), len(s), "squeeze")
    for ax in axes:
        if s[ax] != 1:
            raise ShapeError(f"squeeze: cannot select an axis to squeeze out which has size "
                             f"not equal to one (axis {ax}, shape {s})")
    return [tuple(d for i, d in enumerate(s) if i not in axes)]


@register("_npi_squeeze", "_np_squeeze", attrs={"axis": IntOrTuple(None)},
          infer_shape=_squeeze_shape, strict=True, legacy=legacy_forms.squeeze)
def squeeze(a, x):
    """Remove size-1 axes (all of them, or those in `axis`)."""
    return x.reshape(_squeeze_shape(a, [x.shape])[0])


def _legacy_squeeze_shape(a, s):
    out = _squeeze_shape(a, s)[0]
    return [out if out else (1,)]


@register("squeeze", attrs={"axis": IntOrTuple(None)}, infer_shape=_legacy_squeeze_shape,
          strict=True)
def squeeze_legacy(a, x):
    """1.x squeeze: as `_npi_squeeze`, but a full squeeze keeps shape (1,)."""
    return x.reshape(_legacy_squeeze_shape(a, [x.shape])[0])


# -- concat / stack -----------------------------------------------------------------------------
def _nargs(a):
    return [f"arg{i}" for i in range(a.num_args)]


def _concat_shape(a, s):
    nd = len(s[0])
    ax = norm_axis(a.dim, nd, "Concat")
    out = list(s[0])
    out[ax] = sum(x[ax] for x in s)
    for x in s[1:]:
        if len(x) != nd or any(x[i] != out[i] for i in range(nd) if i != ax):
            raise ShapeError(f"Concat: input shapes {[tuple(v) for v in s]} differ outside dim {a.dim}")
    return [tuple(out)]


@register("Concat", "concat", "_npi_concat",
          attrs={"num_args": Int(), "dim": Int(1)}, inputs=_nargs, infer_shape=_concat_shape,
          strict=True, out=True, quantized_as="_contrib_quantized_concat")
def concat(a, *xs, out=None):
    """Join `num_args` arrays along `dim`."""
    dt = np.result_type(*xs) if len({x.dtype for x in xs}) > 1 else xs[0].dtype
    try:
        if out is not None:
            return np.concatenate(xs, axis=a.dim, out=out)
        return np.concatenate(xs, axis=a.dim, dtype=dt)
    except (ValueError, np.exceptions.AxisError):
        _concat_shape(a, [x.shape for x in xs])
        raise


def _npcat_shape(a, s):
    if a.axis is None:
        return [(sum(int(np.prod(x)) for x in s),)]
    return _concat_shape(_Dim(a.axis), s)


class _Dim:
    def __init__(self, dim):
        self.dim = dim


@register("_npi_concatenate", attrs={"num_args": Int(), "axis": Int(0, optional=True)}, inputs=_nargs,
          infer_shape=_npcat_shape, strict=True, legacy=legacy_forms.concatenate)
def np_concatenate(a, *xs):
    """np.concatenate (axis None flattens)."""
    if a.axis is None:
        return np.concatenate([x.reshape(-1) for x in xs])
    return np.concatenate(xs, axis=a.axis)


def _stack_shape(a, s):
    nd = len(s[0]) + 1
    ax = norm_axis(a.axis, nd, "stack")
    for x in s[1:]:
        if tuple(x) != tuple(s[0]):
            raise ShapeError(f"stack: all input shapes must be equal, got {[tuple(v) for v in s]}")
    return [tuple(s[0][:ax]) + (len(s),) + tuple(s[0][ax:])]


@register("stack", "_npi_stack", attrs={"axis": Int(0), "num_args": Int()}, inputs=_nargs,
          infer_shape=_stack_shape, strict=True, out=True)
def stack(a, *xs, out=None):
    try:
        if out is not None:
            return np.stack(xs, axis=a.axis, out=out)
        return np.stack(xs, axis=a.axis)
    except (ValueError, np.exceptions.AxisError):
        _stack_shape(a, [x.shape for x in xs])
        raise


# -- tile / repeat / flip -----------------------------------------------------------------------
def _tile_shape(a, s):
    s = tuple(s[0])
    reps = tuple(a.reps)
    n = max(len(s), len(reps))
    s = (1,) * (n - len(s)) + s
    reps = (1,) * (n - len(reps)) + reps
    return [tuple(d * r for d, r in zip(s, reps))]


@register("tile", "_npi_tile", attrs={"reps": Shape()}, infer_shape=_tile_shape, strict=True)
def tile(a, x):
    return np.tile(x, a.reps)


def _repeat_shape(a, s):
    s = tuple(s[0])
    r = a.repeats
    if a.axis is None:
        return [(int(np.prod(s)) * r,)]
    ax = norm_axis(a.axis, len(s), "repeat")
    return [s[:ax] + (s[ax] * r,) + s[ax + 1:]]


@register("repeat", attrs={"repeats": Int(), "axis": Int(None)}, infer_shape=_repeat_shape,
          strict=True)
def repeat(a, x):
    """Repeat each element `repeats` times along `axis` (flattened when axis is None)."""
    return np.repeat(x, a.repeats, axis=a.axis)


def _repeats_shape(a, s):
    s = tuple(s[0])
    reps = tuple(a.repeats)
    if a.axis is None:
        n = int(np.prod(s))
        return [(n * reps[0],) if len(reps) == 1 else (sum(reps),)]
    ax = norm_axis(a.axis, len(s), "repeat")
    d = s[ax] * reps[0] if len(reps) == 1 else sum(reps)
    return [s[:ax] + (d,) + s[ax + 1:]]


@register("_npi_repeats", attrs={"repeats": Shape(), "axis": Int(None)},
          infer_shape=_repeats_shape, strict=True, legacy=legacy_forms.repeats)
def repeats(a, x):
    """np.repeat with a tuple of repeats (one value broadcast, or one per element)."""
    r = a.repeats[0] if len(a.repeats) == 1 else np.asarray(a.repeats)
    return np.repeat(x, r, axis=a.axis)


def _flip_axes(a, ndim):
    if a.axis is None:
        return tuple(range(ndim))
    return norm_axes(a.axis if isinstance(a.axis, tuple) else (a.axis,), ndim, "flip")


@register("_npi_flip", "reverse", "flip", attrs={"axis": IntOrTuple(None)},
          infer_shape=lambda a, s: [tuple(s[0])], strict=True)
def flip(a, x):
    """Reverse the order of elements along `axis`."""
    return np.flip(x, _flip_axes(a, x.ndim))


# -- split --------------------------------------------------------------------------------------
def _sc_shape(a, s):
    s = list(s[0])
    ax = norm_axis(a.axis, len(s), "SliceChannel")
    if s[ax] % a.num_outputs:
        raise ShapeError(f"SliceChannel: axis {a.axis} of size {s[ax]} is not divisible by "
                         f"num_outputs={a.num_outputs}")
    s[ax] //= a.num_outputs
    if a.squeeze_axis:
        if s[ax] != 1:
            raise ShapeError("SliceChannel: squeeze_axis needs output size 1 on the split axis")
        del s[ax]
    return [tuple(s)] * a.num_outputs


@register("SliceChannel", "split", attrs={"num_outputs": Int(), "axis": Int(1),
                                          "squeeze_axis": Bool(False)},
          num_outputs=lambda a: a.num_outputs, infer_shape=_sc_shape, strict=True)
def slice_channel(a, x):
    """Split into `num_outputs` equal parts along `axis` (views)."""
    parts = np.split(x, a.num_outputs, axis=a.axis)
    if a.squeeze_axis:
        parts = [np.squeeze(p, axis=a.axis) for p in parts]
    return tuple(parts) if len(parts) > 1 else parts[0]   # one output: an array, as the plan expects


def _v2_bounds(a, n):
    if a.sections and a.sections > 0:
        if n % a.sections:
            raise ShapeError(f"split: array split does not result in an equal division "
                             f"({n} into {a.sections})")
        step = n // a.sections
        return [(k * step, (k + 1) * step) for k in range(a.sections)]
    idx = list(a.indices or ())
    if not idx or idx[0] != 0:
        idx = [0] + idx
    bounds = []
    for k, b in enumerate(idx):
        e = idx[k + 1] if k + 1 < len(idx) else n
        b, e = min(max(b, 0), n), min(max(e, 0), n)
        bounds.append((b, max(b, e)))
    return bounds


def _v2_nout(a):
    if a.sections and a.sections > 0:
        return a.sections
    idx = list(a.indices or ())
    return len(idx) + (0 if idx and idx[0] == 0 else 1)


def _v2_shape(a, s):
    s = list(s[0])
    ax = norm_axis(a.axis, len(s), "split")
    outs = []
    for b, e in _v2_bounds(a, s[ax]):
        o = list(s)
        o[ax] = e - b
        if a.squeeze_axis:
            del o[ax]
        outs.append(tuple(o))
    return outs


@register("_split_v2", "_npi_split", attrs={"indices": Shape(()), "axis": Int(1),
                                            "squeeze_axis": Bool(False), "sections": Int(0)},
          num_outputs=_v2_nout, infer_shape=_v2_shape, strict=True)
def split_v2(a, x):
    """Split at `indices` (1.x writes the leading 0) or into `sections` equal parts."""
    ax = norm_axis(a.axis, x.ndim, "split")
    sl = [slice(None)] * x.ndim
    outs = []
    for b, e in _v2_bounds(a, x.shape[ax]):
        sl[ax] = slice(b, e)
        p = x[tuple(sl)]
        outs.append(np.squeeze(p, axis=ax) if a.squeeze_axis else p)
    return tuple(outs) if len(outs) > 1 else outs[0]


def _rot90_shape(a, s):
    x = list(s[0])
    if len(a.axes) != 2 or len(x) < 2:
        raise OperatorError(f"rot90: needs two axes of an array of 2+ dimensions, got axes "
                            f"{a.axes} and shape {tuple(x)}")
    i, j = (norm_axis(d, len(x), "rot90") for d in a.axes)
    if i == j:
        raise OperatorError(f"rot90: the axes must differ, got {a.axes}")
    if a.k % 2:
        x[i], x[j] = x[j], x[i]
    return [tuple(x)]


@register("_npi_rot90", attrs={"k": Int(1), "axes": Shape((0, 1))},
          infer_shape=_rot90_shape, strict=True)
def rot90(a, x):
    return np.rot90(x, a.k, axes=a.axes)


@register("_npi_roll", attrs={"shift": Shape(None), "axis": Shape(None)}, infer_shape=lambda a, s: [tuple(s[0])],
          strict=True)
def roll(a, x):
    if a.shift is None:
        return x.copy()
    shift = a.shift if a.axis is not None or len(a.shift) > 1 else a.shift[0]
    return np.roll(x, shift, axis=a.axis)


# -- ONNX lowering ------------------------------------------------------------------------------


@lowers(concat)
def _concat_onnx(ctx, node, ins):
    dt = ctx.out_dtype()
    return ctx.op("Concat", [ctx.cast(x, dt) for x in ins], axis=node.parsed.dim)


def _swap_perm(a, r):
    perm = list(range(r))
    d1, d2 = norm_axis(a.dim1, r), norm_axis(a.dim2, r)
    perm[d1], perm[d2] = perm[d2], perm[d1]
    return perm


def _permute_onnx(perm_of):
    """One ONNX Transpose, the permutation computed as the kernel does."""
    def fn(ctx, node, ins):
        return ctx.op("Transpose", ins, perm=[int(i) for i in perm_of(node.parsed,
                                                                      ctx.rank(ins[0]))])
    return fn


lowers(transpose)(_permute_onnx(_perm))
lowers(swapaxis)(_permute_onnx(_swap_perm))
lowers(moveaxis)(_permute_onnx(_moveaxis_perm))


@lowers(expand_dims)
def _expand_dims_onnx(ctx, node, ins):
    r = ctx.rank(ins[0])
    ax = node.parsed.axis + r + 1 if node.parsed.axis < 0 else node.parsed.axis
    return ctx.op("Unsqueeze", [ins[0], ctx.ints([ax])])


@lowers(squeeze, squeeze_legacy)
def _squeeze_onnx(ctx, node, ins):
    s = ctx.shape(ins[0])
    out = ctx.out_shape()
    if not out or len(out) == len(s):                # legacy full squeeze keeps (1,), or no-op
        return ctx.op("Reshape", [ins[0], ctx.reshape_target()]) if out != s else \
            ctx.op("Identity", ins)
    a = node.parsed
    axes = [i for i, d in enumerate(s) if d == 1] if a.axis is None else \
        norm_axes(a.axis if isinstance(a.axis, tuple) else (a.axis,), len(s), "squeeze")
    return ctx.op("Squeeze", [ins[0], ctx.ints(axes)])


@lowers(stack)
def _stack_onnx(ctx, node, ins):
    ax = norm_axis(node.parsed.axis, ctx.rank(ins[0]) + 1, "stack")
    dt = ctx.out_dtype()
    parts = [ctx.op("Unsqueeze", [ctx.cast(x, dt), ctx.ints([ax])]) for x in ins]
    return ctx.op("Concat", parts, axis=ax)


@lowers(tile)
def _tile_onnx(ctx, node, ins):
    x, reps = ins[0], list(node.parsed.reps)
    r = ctx.rank(x)
    if len(reps) > r:
        x = ctx.op("Unsqueeze", [x, ctx.ints(range(len(reps) - r))])
    reps = [1] * (max(r, len(reps)) - len(reps)) + reps
    return ctx.op("Tile", [x, ctx.ints(reps)])


def _repeat_onnx_axis(ctx, x, shape, ax, reps: int):
    """Each element `reps` times along `ax`: unsqueeze, expand the new axis, merge it."""
    u = ctx.op("Unsqueeze", [x, ctx.ints([ax + 1])])
    ones = [1] * (len(shape) + 1)
    ones[ax + 1] = reps
    e = ctx.op("Expand", [u, ctx.ints(ones)])
    return ctx.op("Reshape", [e, ctx.ints([0] * ax + [-1] + list(shape[ax + 1:]))])


@lowers(repeat)
def _repeat_onnx(ctx, node, ins):
    a = node.parsed
    x, shape = ins[0], ctx.shape(ins[0])
    if a.axis is None:
        x, shape = ctx.op("Reshape", [x, ctx.ints([-1])]), (int(np.prod(shape)),)
    return _repeat_onnx_axis(ctx, x, shape, norm_axis(a.axis or 0, len(shape), "repeat"),
                             a.repeats)


@lowers(repeats)
def _repeats_onnx(ctx, node, ins):
    a = node.parsed
    x, shape = ins[0], ctx.shape(ins[0])
    if a.axis is None:
        x, shape = ctx.op("Reshape", [x, ctx.ints([-1])]), (int(np.prod(shape)),)
    ax = norm_axis(a.axis or 0, len(shape), "repeat")
    if len(a.repeats) == 1:
        return _repeat_onnx_axis(ctx, x, shape, ax, a.repeats[0])
    idx = np.repeat(np.arange(shape[ax]), np.asarray(a.repeats))
    return ctx.op("Gather", [x, ctx.const(idx.astype(np.int64))], axis=ax)


@lowers(flip)
def _flip_onnx(ctx, node, ins):
    axes = list(_flip_axes(node.parsed, ctx.rank(ins[0])))
    n = len(axes)
    return ctx.op("Slice", [ins[0], ctx.ints([-1] * n), ctx.ints([np.iinfo(np.int64).min] * n),
                            ctx.ints(axes), ctx.ints([-1] * n)])


def _split_onnx(ctx, x, ax: int, bounds, squeeze_axis: bool) -> list[str]:
    sizes = [e - b for b, e in bounds]
    if len(bounds) == 1:
        parts = [ctx.op("Identity", [x])]
    elif all(sizes) and bounds[0][0] == 0 and bounds[-1][1] == ctx.shape(x)[ax]:
        parts = ctx.op("Split", [x, ctx.ints(sizes)], n_out=len(sizes), axis=ax)
    else:
        parts = [ctx.op("Slice", [x, ctx.ints([b]), ctx.ints([e]), ctx.ints([ax])])
                 for b, e in bounds]
    if squeeze_axis:
        parts = [ctx.op("Squeeze", [p, ctx.ints([ax])]) for p in parts]
    return parts


@lowers(slice_channel)
def _slice_channel_onnx(ctx, node, ins):
    a = node.parsed
    ax = norm_axis(a.axis, ctx.rank(ins[0]), "SliceChannel")
    step = ctx.shape(ins[0])[ax] // a.num_outputs
    bounds = [(k * step, (k + 1) * step) for k in range(a.num_outputs)]
    return _split_onnx(ctx, ins[0], ax, bounds, a.squeeze_axis)


@lowers(split_v2)
def _split_v2_onnx(ctx, node, ins):
    a = node.parsed
    ax = norm_axis(a.axis, ctx.rank(ins[0]), "split")
    return _split_onnx(ctx, ins[0], ax, _v2_bounds(a, ctx.shape(ins[0])[ax]), a.squeeze_axis)


@lowers(np_concatenate)
def _np_concatenate_onnx(ctx, node, ins):
    dt = ctx.out_dtype()
    xs = [ctx.cast(x, dt) for x in ins]
    if node.parsed.axis is None:
        xs, axis = [ctx.op("Reshape", [x, ctx.ints([-1])]) for x in xs], 0
    else:
        axis = node.parsed.axis
    return ctx.op("Concat", xs, axis=axis)


# -- front-ends: the names framework.np / npx expose these operators under ---------------------
for _fn in ("transpose", "moveaxis", "squeeze", "flip", "roll"):
    expose(f"_npi_{_fn}", f"np.{_fn}")
expose("_npi_repeats", "np.repeat")
expose("SwapAxis", "np.swapaxes")
expose("_npi_concatenate", "np.concatenate:flat")     # axis=None
expose("_npi_rot90", "np.rot90(m, k=1, axes=(0, 1))")
