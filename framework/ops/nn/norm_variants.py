"""BatchNorm variants found in MXNet exports: `BatchNorm_v1` (pre-1.0), `_contrib_SyncBatchNorm`
(multi-GPU training; at inference it is BatchNorm) and the fused `_contrib_BatchNormWithReLU` /
`_npx_batch_norm_with_relu`. Each reuses BatchNorm's kernel and shape rules."""
from __future__ import annotations

import numpy as np

from ..attrs import Int, Str
from ..lowering import lowers
from .norm import BN_ATTRS, _bn_param_shapes, _bn_shape, _bn_type, _norm_flops, batch_norm
from .norm import batch_norm_onnx
from ..registry import register

def _axis1(a):
    """The variants without an `axis` attribute normalise over axis 1."""
    if "axis" in a:
        return a
    b = type(a)(a)
    b["axis"] = 1
    return b


_COMMON = dict(inputs=("data", "gamma", "beta", "moving_mean", "moving_var"), aux=(3, 4),
               num_outputs=3, num_visible=lambda a: 3 if a.output_mean_var else 1,
               output_names=("output", "mean", "var"),
               infer_shape=lambda a, s: _bn_shape(_axis1(a), s),
               infer_param_shapes=lambda a, s: _bn_param_shapes(_axis1(a), s),
               infer_type=lambda a, d: _bn_type(_axis1(a), d), strict=True,
               flops=lambda a, i, o: _norm_flops(_axis1(a), i, o), float_only=True)
_bn = batch_norm.kernel

# BatchNorm_v1 has no `axis` (channel axis 1) and no cudnn switch
_V1_ATTRS = {k: v for k, v in BN_ATTRS.items() if k not in ("axis", "cudnn_off", "min_calib_range",
                                                           "max_calib_range", "act_type")}


@register("BatchNorm_v1", attrs=_V1_ATTRS, **_COMMON)
def batch_norm_v1(a, x, gamma, beta, mean, var):
    """BatchNorm over axis 1 (the pre-1.0 operator)."""
    return _bn(_axis1(a), x, gamma, beta, mean, var)


@register("_contrib_SyncBatchNorm", attrs={**_V1_ATTRS, "ndev": Int(1), "key": Str("")},
          **_COMMON)
def sync_batch_norm(a, x, gamma, beta, mean, var):
    """Synchronised BatchNorm: identical to BatchNorm (axis 1) at inference."""
    return _bn(_axis1(a), x, gamma, beta, mean, var)


@register("_contrib_BatchNormWithReLU", "_npx_batch_norm_with_relu", attrs=BN_ATTRS, **_COMMON)
def batch_norm_relu(a, x, gamma, beta, mean, var):
    """BatchNorm followed by ReLU, fused (oneDNN builds export it)."""
    out = _bn(a, x, gamma, beta, mean, var)
    y = out[0] if isinstance(out, tuple) else out
    np.maximum(y, 0, out=y)
    return out


# -- ONNX lowering ------------------------------------------------------------------------------


@lowers(batch_norm_v1, sync_batch_norm)
def _bn_variant_onnx(ctx, node, ins):
    return batch_norm_onnx(ctx, _axis1(node.parsed), ins)


@lowers(batch_norm_relu)
def _bn_relu_onnx(ctx, node, ins):
    outs = batch_norm_onnx(ctx, _axis1(node.parsed), ins)
    if isinstance(outs, str):
        return ctx.op("Relu", [outs])
    return [ctx.op("Relu", [outs[0]])] + outs[1:]
