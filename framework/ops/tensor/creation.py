"""Array creation and dtype/identity ops: _zeros/_ones/_full/_arange (1.x and `_npi_*`),
zeros_like/ones_like/full_like, arange_like, eye, linspace, Cast, BlockGrad, _copy."""
from __future__ import annotations

import numpy as np

from ...base import ShapeError, bfloat16_to_float32, held_dtype, is_bfloat16, round_to_bfloat16
from .. import legacy_forms
from ..common import F32, norm_axis, same_shape
from ..attrs import Bool, DType, Float, Int, Shape, Str
from .amp import cast_onnx
from ..lowering import Unsupported, lowers, lowers_named
from ..registry import expose, register


def _dt(a):
    return a.dtype if a.dtype is not None else F32


def _const_type(a, d):
    return [_dt(a)]


def _init_shape(a, s):
    return [tuple(a.shape)]


_INIT = {"shape": Shape(()), "ctx": Str(""), "dtype": DType(F32)}


@register("_npi_zeros", attrs=dict(_INIT), inputs=(), infer_shape=_init_shape,
          infer_type=_const_type, strict=True, legacy=legacy_forms.creation("_zeros"))
def zeros(a):
    """Zeros of `shape`."""
    return np.zeros(a.shape, _dt(a))


@register("_npi_ones", attrs=dict(_INIT), inputs=(), infer_shape=_init_shape,
          infer_type=_const_type, strict=True, legacy=legacy_forms.creation("_ones"))
def ones(a):
    return np.ones(a.shape, _dt(a))


@register("_npi_full", attrs={**_INIT, "value": Float()}, inputs=(),
          infer_shape=_init_shape, infer_type=_const_type, strict=True,
          legacy=legacy_forms.creation("_full"))
def full(a):
    return np.full(a.shape, a.value, _dt(a))


@register("_npi_empty", attrs=dict(_INIT), inputs=(), infer_shape=_init_shape,
          infer_type=_const_type, strict=True, legacy=legacy_forms.creation("_zeros"))
def empty(a):
    return np.zeros(a.shape, _dt(a))


# MXNet 1.x's creation ops compute the same arrays, but a 0 in their `shape` is a dim left to
# shape inference (the batch size of an RNN's begin state), resolved per input signature
for _np_op, _name in ((zeros, "_zeros"), (ones, "_ones"), (full, "_full"), (empty, "_empty")):
    register(_name, attrs=dict(_np_op.attrs), inputs=(), infer_shape=_init_shape,
             infer_type=_const_type, strict=True)(_np_op.kernel)


def _arange_values(start, stop, step, repeat, dtype):
    if stop is None:
        start, stop = 0.0, start
    n = int(np.ceil((stop - start) / step)) if step else 0
    n = max(n, 0)
    v = (start + np.arange(n, dtype=np.float64) * step).astype(dtype)
    return np.repeat(v, repeat) if repeat > 1 else v


def _arange_shape(a, s):
    start, stop = (0.0, a.start) if a.stop is None else (a.start, a.stop)
    n = max(int(np.ceil((stop - start) / a.step)), 0) if a.step else 0
    return [(n * a.repeat,)]


@register("_npi_arange", "_arange", attrs={"start": Float(), "stop": Float(None, optional=True),
                                            "step": Float(1.0), "repeat": Int(1),
                                            "infer_range": Bool(False), "ctx": Str(""),
                                            "dtype": DType(F32)},
          inputs=(), infer_shape=_arange_shape, infer_type=_const_type, strict=True,
          legacy=legacy_forms.creation("_arange"))
def arange(a):
    """Evenly spaced values in [start, stop) with `step`, each repeated `repeat` times."""
    return _arange_values(a.start, a.stop, a.step, a.repeat, _dt(a))


def _arange_like_shape(a, s):
    if a.axis is None:
        return [tuple(s[0])]
    return [(s[0][norm_axis(a.axis, len(s[0]), "arange_like")],)]


@register("_contrib_arange_like", "_npx_arange_like",
          attrs={"start": Float(0.0), "step": Float(1.0), "repeat": Int(1), "ctx": Str(""),
                 "axis": Int(None)},
          infer_shape=_arange_like_shape, strict=True)
def arange_like(a, x):
    """arange with the length (or shape, axis None) of the input."""
    shape = _arange_like_shape(a, [x.shape])[0]
    n = int(np.prod(shape))
    rep = max(a.repeat, 1)
    v = (a.start + np.arange((n + rep - 1) // rep, dtype=np.float64) * a.step)
    v = np.repeat(v, rep)[:n]
    return v.astype(x.dtype).reshape(shape)


@register("zeros_like", "_npi_zeros_like", infer_shape=same_shape)
def zeros_like(a, x):
    return np.zeros_like(x)


@register("ones_like", "_npi_ones_like", infer_shape=same_shape)
def ones_like(a, x):
    return np.ones_like(x)


@register("_npi_full_like", attrs={"fill_value": Float(), "ctx": Str(""), "dtype": DType(None)},
          infer_shape=same_shape,
          infer_type=lambda a, d: [a.dtype if a.dtype is not None else d[0]], strict=True)
def full_like(a, x):
    return np.full(x.shape, a.fill_value, a.dtype if a.dtype is not None else x.dtype)


@register("_npi_eye", attrs={"N": Int(), "M": Int(None), "k": Int(0),
                                              "ctx": Str(""), "dtype": DType(F32)},
          inputs=(), infer_shape=lambda a, s: [(a.N, a.N if a.M is None else a.M)],
          infer_type=_const_type, strict=True)
def eye(a):
    return np.eye(a.N, a.M, a.k, dtype=_dt(a))


@register("_npi_identity", attrs=dict(_INIT), inputs=(), infer_shape=_init_shape,
          infer_type=_const_type, strict=True)
def identity(a):
    """Square identity matrix of `shape` (n, n)."""
    return np.eye(a.shape[0], a.shape[-1] if len(a.shape) > 1 else None, dtype=_dt(a))


@register("_npi_linspace", attrs={"start": Float(), "stop": Float(), "num": Int(),
                                  "endpoint": Bool(True), "ctx": Str(""), "dtype": DType(F32)},
          inputs=(), infer_shape=lambda a, s: [(a.num,)], infer_type=_const_type, strict=True)
def linspace(a):
    if a.num < 0:
        raise ShapeError(f"linspace: number of samples, {a.num}, must be non-negative")
    # integer dtypes round as NumPy does (toward −∞ since NumPy 2), not by truncating floats
    return np.linspace(a.start, a.stop, a.num, endpoint=a.endpoint, dtype=_dt(a))


# -- dtype / identity ---------------------------------------------------------------------------
@register("Cast", "cast", "_npi_cast", attrs={"dtype": DType(None)},
          infer_shape=same_shape,
          infer_type=lambda a, d: [a.dtype if a.dtype is None else held_dtype(a.dtype)],
          strict=True, profiler_scope=True)
def cast(a, x):
    """Convert to `dtype` (a copy; float→int truncates toward zero as in C). bfloat16 is held
    as float32 rounded to bfloat16 values; a bfloat16 array from a file is widened exactly."""
    if a.dtype is None:
        raise ShapeError("Cast: dtype is required")
    if is_bfloat16(x.dtype):
        x = bfloat16_to_float32(x)
    if is_bfloat16(a.dtype):
        return round_to_bfloat16(x.astype(np.float32))
    return x.astype(a.dtype)


@register("BlockGrad", "stop_gradient", "_npi_stop_gradient", "make_loss", "MakeLoss",
          infer_shape=same_shape)
def block_grad(a, x):
    """Identity in the forward pass (stops gradients in MXNet)."""
    return x


@register("_npi_copy", "_copy", "identity", "_np_copy", infer_shape=same_shape)
def copy(a, x):
    return x.copy()


@register("cast_storage", attrs={"stype": Str("default")}, infer_shape=same_shape)
def cast_storage(a, x):
    """Only dense storage exists here: identity."""
    return x


@register("shape_array", "_npi_shape_array", infer_shape=lambda a, s: [(len(s[0]),)],
          infer_type=lambda a, d: [np.dtype(np.int64)])
def shape_array(a, x):
    return np.asarray(x.shape, dtype=np.int64)


@register("size_array", infer_shape=lambda a, s: [(1,)],
          infer_type=lambda a, d: [np.dtype(np.int64)])
def size_array(a, x):
    return np.asarray([x.size], dtype=np.int64)


# -- ONNX lowering ------------------------------------------------------------------------------


def _fill_onnx(ctx, shape_tensor: str, value, dtype) -> str:
    v = ctx.helper.make_tensor("value", ctx.tensor_type(dtype), [1], [value])
    return ctx.op("ConstantOfShape", [shape_tensor], value=v)


def _fill_value(node):
    a = node.parsed
    return 1 if node.op.kernel is ones.kernel else getattr(a, "value", 0)


@lowers_named("_zeros", "_ones", "_full", "_empty")
@lowers(zeros, ones, full, empty)
def _fill_op_onnx(ctx, node, ins):
    """A constant, or (an MXNet 1.x state `_zeros((0, H))` whose 0 is the batch) zeros of the
    runtime batch."""
    vary = ctx.out_varying[0] if ctx.out_varying else ()
    if not vary:
        return ctx.const(node.op.kernel(node.parsed), hint="fill")
    dt = ctx.out_dtype()
    return _fill_onnx(ctx, ctx.runtime_shape(ctx.out_shape(), vary),
                      np.asarray(_fill_value(node), dt).item(), dt)


@lowers(arange, eye, identity, linspace)
def _static_creation_onnx(ctx, node, ins):
    return ctx.const(node.op.kernel(node.parsed), hint="const")


@lowers(arange_like)
def _arange_like_onnx(ctx, node, ins):
    if ctx.varying(ins[0]) and (node.parsed.axis is None
                                or norm_axis(node.parsed.axis, ctx.rank(ins[0]), "arange_like")
                                in ctx.varying(ins[0])):
        raise Unsupported("arange_like over an axis that follows the batch")
    x = np.zeros(ctx.shape(ins[0]), ctx.dtype(ins[0]))
    return ctx.const(node.op.kernel(node.parsed, x), hint="arange")


@lowers(zeros_like, ones_like, full_like)
def _fill_like_onnx(ctx, node, ins):
    value = {"zeros_like": 0, "ones_like": 1}.get(node.op.name)
    value = node.parsed.fill_value if value is None else value
    dt = ctx.out_dtype()
    return _fill_onnx(ctx, ctx.shape_of(ins[0]), np.asarray(value, dt).item(), dt)


@lowers(cast)
def _cast_onnx(ctx, node, ins):
    return cast_onnx(ctx, ins[0], node.parsed.dtype)


@lowers(block_grad, copy, cast_storage)
def _identity_onnx(ctx, node, ins):
    return ctx.op("Identity", ins)


@lowers(shape_array)
def _shape_array_onnx(ctx, node, ins):
    return ctx.op("Identity", [ctx.shape_of(ins[0])])


@lowers(size_array)
def _size_array_onnx(ctx, node, ins):
    return ctx.op("Reshape", [ctx.op("Size", ins), ctx.ints([1])])


# -- front-ends: the names framework.np / npx expose these operators under ---------------------
for _fn in ("zeros", "ones", "full", "full_like", "arange", "linspace", "eye", "copy"):
    expose(f"_npi_{_fn}", f"np.{_fn}")
expose("_contrib_arange_like", "npx.arange_like")
expose("BlockGrad", "npx.stop_gradient(data)")
expose("shape_array", "npx.shape_array(data, **kwargs)")
