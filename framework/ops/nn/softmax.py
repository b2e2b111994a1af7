"""softmax, log_softmax, softmin (axis / temperature / length), masked_softmax,
SoftmaxActivation and the Module-era output ops (SoftmaxOutput, *RegressionOutput) at inference."""
from __future__ import annotations

import numpy as np

from ...base import OperatorError
from ..nnutil import CF, OptBool, prod
from .activation import sigmoid
from ..attrs import Bool, DType, Int, Str
from ..lowering import lowers, lowers_named, refuse_if
from ..registry import expose, register


def _same(a, s):
    return [tuple(s[0])]


def _ew_flops(a, ins, outs):
    return 4 * int(np.prod(outs[0])) if outs else 0


def _axis(axis: int, ndim: int, op: str) -> int:
    if not -ndim <= axis < max(ndim, 1):
        raise OperatorError(f"{op}: axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % max(ndim, 1)


def _work(x: np.ndarray) -> np.ndarray:
    # half precision accumulates in float32 (MXNet's AType)
    return x.astype(np.float32) if x.dtype == np.float16 or x.dtype.kind not in "fc" else x


def _length_mask(x, length, axis):
    """Boolean mask (True = valid) from per-row lengths (shape of x without `axis`)."""
    n = x.shape[axis]
    ln = np.asarray(length)
    if ln.dtype.kind == "f":
        ln = ln.astype(np.int64)
    ln = np.expand_dims(ln.reshape([s for i, s in enumerate(x.shape) if i != axis]), axis)
    shape = [1] * x.ndim
    shape[axis] = n
    return np.arange(n).reshape(shape) < ln


def softmax_core(x, axis, temperature=None, log=False, negate=False, mask=None):
    """softmax / log_softmax along `axis` in float (x: any float array); `mask` True = valid."""
    xw = _work(x)
    if negate:
        xw = -xw
    if mask is not None:
        xw = np.where(mask, xw, -np.inf)
    m = np.max(xw, axis=axis, keepdims=True)
    if mask is not None:
        m = np.where(np.isfinite(m), m, 0)
    z = xw - m
    if temperature is not None and temperature != 1.0:
        z /= xw.dtype.type(temperature)
    if log:
        with np.errstate(divide="ignore", invalid="ignore"):
            out = z - np.log(np.sum(np.exp(z), axis=axis, keepdims=True))
    else:
        out = np.exp(z)
        s = np.sum(out, axis=axis, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            out /= s
    if mask is not None:
        out = np.where(mask, out, 0)
    return out


def _sm_inputs(a):
    return ("data", "length") if a.use_length else ("data",)


def _sm_type(a, d):
    """`dtype`, else the data's; integer data gives float32 (as the kernels compute)."""
    dt = np.dtype(a.dtype) if a.dtype is not None else np.dtype(d[0])
    return [dt if dt.kind in "fc" else np.dtype(np.float32)]


_SM_ATTRS = {"axis": Int(-1), "temperature": CF(None), "dtype": DType(None),
             "use_length": OptBool(False)}


def _softmax_family(log: bool, negate: bool, name: str):
    def kernel(a, x, length=None):
        ax = _axis(a.axis, x.ndim, name)
        mask = _length_mask(x, length, ax) if a.use_length and length is not None else None
        out = softmax_core(x, ax, a.temperature, log=log, negate=negate, mask=mask)
        dt = np.dtype(a.dtype) if a.dtype is not None else x.dtype
        if dt.kind not in "fc":
            dt = np.dtype(np.float32)
        return out.astype(dt, copy=False)
    kernel.__doc__ = f"{name} along `axis` with optional temperature and lengths."
    return kernel


register("softmax", "_npx_softmax", attrs=_SM_ATTRS, inputs=_sm_inputs, infer_shape=_same,
         infer_type=_sm_type, strict=True, flops=_ew_flops)(
    _softmax_family(False, False, "softmax"))
register("log_softmax", "_npx_log_softmax", attrs=_SM_ATTRS, inputs=_sm_inputs,
         infer_shape=_same, infer_type=_sm_type, strict=True, flops=_ew_flops)(
    _softmax_family(True, False, "log_softmax"))
register("softmin", attrs=_SM_ATTRS, inputs=_sm_inputs, infer_shape=_same,
         infer_type=_sm_type, strict=True, flops=_ew_flops)(
    _softmax_family(False, True, "softmin"))


# -- masked softmax (2.x) ---------------------------------------------------------------------
_MS_ATTRS = {"axis": Int(-1), "temperature": CF(None), "normalize": OptBool(True)}


def _masked(log: bool, name: str):
    def kernel(a, x, mask):
        ax = _axis(a.axis, x.ndim, name)
        m = np.broadcast_to(mask.astype(bool, copy=False), x.shape)
        xw = _work(x)
        lowest = np.finfo(xw.dtype).min
        xm = np.where(m, xw, lowest)
        out = softmax_core(xm, ax, a.temperature, log=log)
        out = np.where(m, out, -np.inf if log else 0)
        return out.astype(x.dtype if x.dtype.kind in "fc" else np.float32, copy=False)
    kernel.__doc__ = f"{name}: masked positions (mask False) give {'-inf' if log else '0'}."
    return kernel


register("masked_softmax", "_npx_masked_softmax", attrs=_MS_ATTRS, inputs=("data", "mask"),
         infer_shape=_same, strict=True, flops=_ew_flops,
         float_only=True)(_masked(False, "masked_softmax"))
register("masked_log_softmax", "_npx_masked_log_softmax", attrs=_MS_ATTRS,
         inputs=("data", "mask"), infer_shape=_same, strict=True,
         flops=_ew_flops, float_only=True)(_masked(True, "masked_log_softmax"))


# -- SoftmaxActivation ------------------------------------------------------------------------
@register("SoftmaxActivation", attrs={"mode": Str("instance", choices=("instance", "channel"))},
          infer_shape=_same, strict=True, flops=_ew_flops)
def softmax_activation(a, x):
    """instance: softmax over all but the first axis; channel: softmax over axis 1."""
    if a.mode == "channel":
        if x.ndim < 2:
            raise OperatorError("SoftmaxActivation(channel) needs at least 2-D input")
        return softmax_core(x, 1).astype(x.dtype, copy=False)
    flat = x.reshape(x.shape[0], -1)
    return softmax_core(flat, 1).astype(x.dtype, copy=False).reshape(x.shape)


# -- output ops (inference: the label input is ignored) ---------------------------------------
_SO_ATTRS = {"grad_scale": CF(1.0), "ignore_label": CF(-1.0), "multi_output": Bool(False),
             "use_ignore": Bool(False), "preserve_shape": Bool(False),
             "normalization": Str("null", choices=("null", "batch", "valid")),
             "out_grad": Bool(False), "smooth_alpha": CF(0.0)}


def _so_param_shapes(a, s):
    x = tuple(s[0])
    if a.multi_output:
        lab = (x[0], prod(x) // x[0] // x[1])
    else:
        lab = x[:-1]
    return [x, tuple(s[1]) if len(s) > 1 and s[1] else lab]


@register("SoftmaxOutput", "Softmax", attrs=_SO_ATTRS, inputs=("data", "label"),
          infer_shape=_same, infer_param_shapes=_so_param_shapes, strict=True, flops=_ew_flops)
def softmax_output(a, x, label=None):
    """Inference forward of SoftmaxOutput: softmax over axis 1 (multi_output), the last axis
    (preserve_shape) or all but the first axis (default)."""
    if a.multi_output:
        return softmax_core(x, 1).astype(x.dtype, copy=False)
    if a.preserve_shape:
        return softmax_core(x, x.ndim - 1).astype(x.dtype, copy=False)
    flat = x.reshape(x.shape[0], -1)
    return softmax_core(flat, 1).astype(x.dtype, copy=False).reshape(x.shape)


def _reg_param_shapes(a, s):
    return [tuple(s[0]), tuple(s[1]) if len(s) > 1 and s[1] else tuple(s[0])]


_REG = dict(attrs={"grad_scale": CF(1.0)}, inputs=("data", "label"), infer_shape=_same,
            infer_param_shapes=_reg_param_shapes, strict=True, float_only=True)


@register("LinearRegressionOutput", **_REG)
def linear_regression_output(a, x, label=None):
    """Inference: identity."""
    return x.copy()


@register("MAERegressionOutput", **_REG)
def mae_regression_output(a, x, label=None):
    """Inference: identity."""
    return x.copy()


@register("LogisticRegressionOutput", **_REG)
def logistic_regression_output(a, x, label=None):
    """Inference: sigmoid(x)."""
    return sigmoid(x)


# -- ONNX lowering ------------------------------------------------------------------------------


def _softmax_onnx_core(ctx, x, axis: int, temperature=None, log=False, negate=False):
    if negate:
        x = ctx.op("Neg", [x])
    if temperature is not None and temperature != 1.0:
        x = ctx.op("Div", [x, ctx.const(np.asarray(temperature, np.float32))])
    return ctx.op("LogSoftmax" if log else "Softmax", [x], axis=axis)


def _softmax_onnx(log: bool, negate: bool):
    def fn(ctx, node, ins):
        a = node.parsed
        dt = ctx.out_dtype()
        x = ctx.cast(ins[0], np.float32 if ctx.dtype(ins[0]).kind not in "f" else ctx.dtype(ins[0]))
        y = _softmax_onnx_core(ctx, x, _axis(a.axis, ctx.rank(ins[0]), "softmax"),
                               a.temperature, log, negate)
        return ctx.cast(y, dt) if np.dtype(dt) != ctx.dtype(ins[0]) else y
    return fn


for _name, _log, _neg in (("softmax", False, False), ("log_softmax", True, False),
                          ("softmin", False, True)):
    lowers_named(_name, check=refuse_if(softmax_with_lengths=lambda a: bool(a.use_length)))(
        _softmax_onnx(_log, _neg))


def _flat_softmax_onnx(ctx, x):
    """Softmax over all but the first axis, shape kept."""
    y = ctx.op("Softmax", [ctx.op("Flatten", [x], axis=1)], axis=1)
    return ctx.op("Reshape", [y, ctx.shape_of(x)])


@lowers(softmax_activation)
def _softmax_activation_onnx(ctx, node, ins):
    if node.parsed.mode == "channel":
        return ctx.op("Softmax", [ins[0]], axis=1)
    return _flat_softmax_onnx(ctx, ins[0])


@lowers(softmax_output)
def _softmax_output_onnx(ctx, node, ins):
    a = node.parsed
    if a.multi_output:
        return ctx.op("Softmax", [ins[0]], axis=1)
    if a.preserve_shape:
        return ctx.op("Softmax", [ins[0]], axis=-1)
    return _flat_softmax_onnx(ctx, ins[0])


@lowers(linear_regression_output, mae_regression_output)
def _regression_output_onnx(ctx, node, ins):
    return ctx.op("Identity", [ins[0]])


@lowers(logistic_regression_output)
def _logistic_output_onnx(ctx, node, ins):
    return ctx.op("Sigmoid", [ins[0]])


# -- front-ends: the names framework.np / npx expose these operators under ---------------------
for _name in ("masked_softmax", "masked_log_softmax"):
    expose(_name, f"npx.{_name}(data, mask, axis=-1, temperature=1.0, normalize=True)")
