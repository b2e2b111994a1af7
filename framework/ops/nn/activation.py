"""Activations: Activation, relu/sigmoid (`_npx_*`), softsign, hard_sigmoid, log_sigmoid, mish,
LeakyReLU (leaky, prelu, elu, selu, gelu, rrelu at inference)."""
from __future__ import annotations

import numpy as np

from ...base import OperatorError
from .._kernels import epilogue as _epilogue
from .. import legacy_forms
from ..common import float_math
from ..nnutil import CF
from .._kernels.special import erf
from ..attrs import Str
from ..lowering import lowers, simple
from ..registry import expose, register

_SQRT2 = np.float32(1.4142135623730951)
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_LAMBDA = 1.0507009873554804934193349852946


def _same(a, s):
    return [tuple(s[0])]


def _ew_flops(a, ins, outs):
    return int(np.prod(outs[0])) if outs else 0


# -- element-wise kernels (float math in the input dtype, as MXNet does; on integers the float
# result is truncated back, `float_math`) ------------------------------------------------------
def relu(x, out=None):
    # NaN propagates (MXNet: IsNan(a) || a > 0 ? a : 0); np.maximum does the same.
    return np.maximum(x, x.dtype.type(0), out=out)


@float_math
def sigmoid(x, out=None):
    with np.errstate(over="ignore"):
        y = np.negative(x, out=out)
        np.exp(y, out=y)
        y += 1
        return np.reciprocal(y, out=y)


def tanh(x, out=None):
    return np.tanh(x, out=out)


def softrelu(x, out=None):
    # MXNet: a > 20 ? a : log1p(exp(a))
    y = np.log1p(np.exp(np.minimum(x, x.dtype.type(20))))
    if out is None:
        return np.where(x > 20, x, y)
    np.copyto(out, np.where(x > 20, x, y))
    return out


@float_math
def softsign(x, out=None):
    d = np.abs(x)
    d += 1
    return np.divide(x, d, out=out)


@float_math
def log_sigmoid(x, out=None):
    # log(1 / (1 + exp(-a))), evaluated stably
    return np.negative(np.logaddexp(x.dtype.type(0), -x), out=out)


@float_math
def mish(x, out=None):
    return np.multiply(x, np.tanh(softrelu(x)), out=out)


_INPLACE_ACTS = ("relu", "sigmoid", "tanh", "softrelu", "softsign")   # one-pass out= kernels
_ACT = {"relu": relu, "sigmoid": sigmoid, "tanh": tanh, "softrelu": softrelu,
        "softsign": softsign, "log_sigmoid": log_sigmoid, "mish": mish}


def _act_type(a, d):
    return [d[0]]


@register("Activation", "_npx_activation",
          attrs={"act_type": Str(choices=tuple(_ACT))}, infer_shape=_same, strict=True,
          out=True, flops=_ew_flops, elementwise=True, epilogue=_epilogue.activation,
          inplace=lambda a: a.act_type in _INPLACE_ACTS, monitor_indexed_inputs=True,
          layer=lambda a: a.act_type,
          quantized_as=lambda a: "_contrib_quantized_act" if a.act_type == "relu" else None)
def activation(a, x, out=None):
    """Activation(act_type): relu, sigmoid, tanh, softrelu, softsign, log_sigmoid, mish."""
    return _ACT[a.act_type](x, out=out)


@register("_npx_relu", "relu", infer_shape=_same, out=True, flops=_ew_flops, elementwise=True,
          inplace=True, epilogue=_epilogue.relu, monitor_indexed_inputs=True,
          profiler_scope=True)
def relu_op(a, x, out=None):
    """max(x, 0) (NaN kept)."""
    return relu(x, out=out)


@register("_npx_sigmoid", "sigmoid", infer_shape=_same, out=True, flops=_ew_flops,
          elementwise=True, inplace=True, epilogue=_epilogue.sigmoid,
          monitor_indexed_inputs=True, profiler_scope=True)
def sigmoid_op(a, x, out=None):
    """1 / (1 + exp(-x))."""
    return sigmoid(x, out=out)


@register("softsign", "_npx_softsign", infer_shape=_same, out=True, flops=_ew_flops,
          elementwise=True)
def softsign_op(a, x, out=None):
    """x / (1 + |x|)."""
    return softsign(x, out=out)


@register("log_sigmoid", infer_shape=_same, out=True, flops=_ew_flops, elementwise=True)
def log_sigmoid_op(a, x, out=None):
    """log(sigmoid(x))."""
    return log_sigmoid(x, out=out)


@register("mish", infer_shape=_same, out=True, flops=_ew_flops, elementwise=True)
def mish_op(a, x, out=None):
    """x * tanh(softrelu(x))."""
    return mish(x, out=out)


@register("hard_sigmoid", attrs={"alpha": CF(0.2), "beta": CF(0.5)}, infer_shape=_same,
          strict=True, out=True, flops=_ew_flops, elementwise=True)
def hard_sigmoid(a, x, out=None):
    """max(0, min(1, alpha * x + beta))."""
    y = np.multiply(x, x.dtype.type(a.alpha), out=out)
    y += x.dtype.type(a.beta)
    return np.clip(y, 0, 1, out=y)


# -- LeakyReLU ------------------------------------------------------------------------------
_LEAKY_TYPES = ("rrelu", "leaky", "prelu", "elu", "selu", "gelu", "gelu_erf", "gelu_tanh")


def _lr_inputs(a):
    return ("data", "gamma") if a.act_type == "prelu" else ("data",)


def _lr_nout(a):
    return 2 if a.act_type == "rrelu" else 1


def _lr_shape(a, s):
    x = tuple(s[0])
    return [x, x] if a.act_type == "rrelu" else [x]


def _lr_param_shapes(a, s):
    x = tuple(s[0])
    if a.act_type == "prelu":
        g = s[1] if len(s) > 1 and s[1] else (x[1] if len(x) > 1 else 1,)
        return [x, tuple(g)]
    return [x]


def _xelu(x, slope):
    return np.where(x > 0, x, x * slope)


def gelu_erf(x):
    h = x.dtype.type(0.5) * x
    return h * (1 + erf(x / _SQRT2).astype(x.dtype, copy=False))


def gelu_tanh(x):
    k = x.dtype.type(0.7978845608028654)  # sqrt(2 / pi)
    return x.dtype.type(0.5) * x * (1 + np.tanh(k * (x + x.dtype.type(0.044715) * x * x * x)))


def _prelu_gamma(x, g):
    """PReLU: a 1-D gamma broadcasts over axis 1 (MXNet's `expand_shape`), others numpy-style."""
    if g.ndim == 1 and x.ndim >= 2 and g.shape[0] == x.shape[1] and g.shape[0] != 1:
        return g.reshape((1, -1) + (1,) * (x.ndim - 2))
    if g.ndim == 1 and x.ndim >= 2 and g.shape[0] != 1 and g.shape[0] != x.shape[-1]:
        raise OperatorError(f"LeakyReLU(prelu): gamma of shape {g.shape} does not fit data "
                            f"of shape {x.shape}")
    return g


def _leaky(a, x, gamma=None):
    t = a.act_type
    if t == "leaky":
        return _xelu(x, x.dtype.type(a.slope))
    if t == "prelu":
        if gamma is None:
            raise OperatorError("LeakyReLU(prelu) needs a gamma input")
        return _xelu(x, _prelu_gamma(x, gamma).astype(x.dtype, copy=False))
    if t == "rrelu":
        # inference: slope = (lower + upper) / 2 (float32 arithmetic, as MXNet); mask output is 0
        slope = (np.float32(a.lower_bound) + np.float32(a.upper_bound)) / np.float32(2)
        return _xelu(x, x.dtype.type(slope)), np.zeros_like(x)
    if t == "elu":
        with np.errstate(over="ignore"):
            return np.where(x > 0, x, x.dtype.type(a.slope) * np.expm1(x))
    if t == "selu":
        with np.errstate(over="ignore"):
            neg = x.dtype.type(SELU_ALPHA) * np.expm1(x)
        return x.dtype.type(SELU_LAMBDA) * np.where(x > 0, x, neg)
    if t in ("gelu", "gelu_erf"):
        return gelu_erf(x)
    if t == "gelu_tanh":
        return gelu_tanh(x)
    raise OperatorError(f"LeakyReLU: unknown act_type {t!r}")


@register("LeakyReLU", "_npx_leaky_relu",
          attrs={"act_type": Str("leaky", choices=_LEAKY_TYPES), "slope": CF(0.25),
                 "lower_bound": CF(0.125), "upper_bound": CF(0.334)},
          inputs=_lr_inputs, num_outputs=_lr_nout, output_names=("output", "mask"),
          infer_shape=_lr_shape,
          infer_param_shapes=_lr_param_shapes, strict=True, flops=_ew_flops,
          elementwise=lambda a: a.act_type != "prelu", legacy=legacy_forms.leaky_relu)
def leaky_relu(a, x, gamma=None):
    """LeakyReLU: leaky / prelu (gamma input) / elu / selu / gelu (erf) / rrelu (inference:
    slope = (lower_bound + upper_bound) / 2; returns (output, mask), both visible as in MXNet)."""
    return _leaky(a, x, gamma)



# -- ONNX lowering ------------------------------------------------------------------------------


def _softrelu_onnx(ctx, x):
    return ctx.op("Softplus", [x])


def _log_sigmoid_onnx(ctx, x):
    return ctx.op("Neg", [ctx.op("Softplus", [ctx.op("Neg", [x])])])


_ONNX_ACT = {
    "relu": lambda ctx, x: ctx.op("Relu", [x]),
    "sigmoid": lambda ctx, x: ctx.op("Sigmoid", [x]),
    "tanh": lambda ctx, x: ctx.op("Tanh", [x]),
    "softrelu": _softrelu_onnx,
    "softsign": lambda ctx, x: ctx.op("Softsign", [x]),
    "log_sigmoid": _log_sigmoid_onnx,
    "mish": lambda ctx, x: ctx.op("Mish", [x]),
}


@lowers(activation)
def _activation_onnx(ctx, node, ins):
    return _ONNX_ACT[node.parsed.act_type](ctx, ins[0])


lowers(relu_op)(simple("Relu"))
lowers(sigmoid_op)(simple("Sigmoid"))
lowers(softsign_op)(simple("Softsign"))
lowers(mish_op)(simple("Mish"))


@lowers(log_sigmoid_op)
def _log_sigmoid_op_onnx(ctx, node, ins):
    return _log_sigmoid_onnx(ctx, ins[0])


@lowers(hard_sigmoid)
def _hard_sigmoid_onnx(ctx, node, ins):
    a = node.parsed
    return ctx.op("HardSigmoid", ins, alpha=float(a.alpha), beta=float(a.beta))


def _gelu_onnx(ctx, x, approx: bool):
    """0.5·x·(1 + erf(x/√2)), or the tanh form (ONNX Gelu is opset 20; this runs on 18)."""
    if approx:
        inner = ctx.op("Mul", [ctx.op("Add", [x, ctx.op("Mul", [ctx.scalar(0.044715, x),
                       ctx.op("Mul", [x, ctx.op("Mul", [x, x])])])]),
                       ctx.scalar(0.7978845608028654, x)])
        t = ctx.op("Tanh", [inner])
    else:
        t = ctx.op("Erf", [ctx.op("Div", [x, ctx.scalar(1.4142135623730951, x)])])
    return ctx.op("Mul", [ctx.op("Mul", [ctx.scalar(0.5, x), x]),
                          ctx.op("Add", [ctx.scalar(1.0, x), t])])


@lowers(leaky_relu)
def _leaky_onnx(ctx, node, ins):
    a = node.parsed
    x, t = ins[0], a.act_type
    if t == "leaky":
        return ctx.op("LeakyRelu", [x], alpha=float(a.slope))
    if t == "prelu":
        g = ins[1]
        gs = ctx.shape(g)
        r = ctx.rank(x)
        if len(gs) == 1 and r >= 2 and gs[0] == ctx.shape(x)[1] and gs[0] != 1:
            g = ctx.op("Reshape", [g, ctx.ints([1, -1] + [1] * (r - 2))])
        return ctx.op("PRelu", [x, g])
    if t == "rrelu":
        slope = (np.float32(a.lower_bound) + np.float32(a.upper_bound)) / np.float32(2)
        y = ctx.op("LeakyRelu", [x], alpha=float(slope))
        return [y, ctx.zeros_like(x)]
    if t == "elu":
        return ctx.op("Elu", [x], alpha=float(a.slope))
    if t == "selu":
        return ctx.op("Selu", [x], alpha=SELU_ALPHA, gamma=SELU_LAMBDA)
    return _gelu_onnx(ctx, x, t == "gelu_tanh")


# -- front-ends: the names framework.np / npx expose these operators under ---------------------
expose("_npx_relu", "npx.relu(data, **kwargs)")
expose("_npx_sigmoid", "npx.sigmoid(data, **kwargs)")
expose("softsign", "npx.softsign(data, **kwargs)")
expose("Activation", "npx.activation(data, act_type='relu', **kwargs)")
