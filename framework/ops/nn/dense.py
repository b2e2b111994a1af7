"""FullyConnected (Dense). (Activation lives in activation.py.)"""
from __future__ import annotations

import numpy as np

from ...base import ShapeError
from .._kernels.nhwc_util import apply_act
from ..nnutil import check_param_shapes
from ..nnutil import CF
from ..attrs import Bool, Int, Str
from ..lowering import lowers
from ..registry import register


def _fc_inputs(a):
    return ("data", "weight") if a.no_bias else ("data", "weight", "bias")


def _fc_shape(a, s):
    if len(s) > 1:
        check_param_shapes("FullyConnected", s, _fc_param_shapes(a, s))
    x = s[0]
    if a.flatten:
        return [(x[0], a.num_hidden)]
    return [tuple(x[:-1]) + (a.num_hidden,)]


def _fc_param_shapes(a, s):
    x = s[0]
    k = int(np.prod(x[1:])) if a.flatten else x[-1]
    out = [x, (a.num_hidden, k)]
    if not a.no_bias:
        out.append((a.num_hidden,))
    return out


def _fc_flops(a, ins, outs):
    return 2 * int(np.prod(outs[0])) * int(ins[1][1])


FC_ATTRS = {"num_hidden": Int(), "no_bias": Bool(False), "flatten": Bool(True)}


@register("FullyConnected", "_npx_fully_connected",
          attrs=FC_ATTRS,
          inputs=_fc_inputs, infer_shape=_fc_shape, infer_param_shapes=_fc_param_shapes,
          strict=True, out=True, flops=_fc_flops, dtype_pair=("data", "weight"), layer="dense",
          with_act="_hs_dense",
          data_shape=lambda a, w: ((-1, w[1]), w[1]) if len(w) == 2 and a.flatten else None)
def fully_connected(a, x, w, b=None, out=None):
    """y = x·Wᵀ + b; `flatten` folds all but the first axis, otherwise applies on the last axis."""
    if a.flatten and x.ndim != 2:
        x = x.reshape(x.shape[0], -1)
    if x.shape[-1] != w.shape[1]:
        raise ShapeError(f"FullyConnected: input feature size {x.shape[-1]} does not match "
                         f"weight shape {tuple(w.shape)}")
    if out is not None and (out.shape != x.shape[:-1] + (w.shape[0],)
                            or out.dtype != np.result_type(x, w)):
        out = None
    y = np.matmul(x, w.T, out=out)
    if b is not None:
        y += b
    return y


_DENSE_ACTS = ("none", "relu", "clip", "sigmoid", "tanh")


@register("_hs_dense",
          attrs={"num_hidden": Int(), "no_bias": Bool(False), "flatten": Bool(True),
                 "act_type": Str("none", choices=_DENSE_ACTS), "a_min": CF(0.0),
                 "a_max": CF(6.0)},
          inputs=_fc_inputs, infer_shape=_fc_shape, strict=True, out=True, flops=_fc_flops)
def hs_dense(a, x, w, b=None, out=None):
    """FullyConnected with its activation fused in place (compiled graphs: passes/fuse.py)."""
    y = fully_connected.kernel(a, x, w, b, out=out)
    return apply_act(y, a.act_type, a.a_min, a.a_max) if a.act_type != "none" else y


# -- ONNX lowering ------------------------------------------------------------------------------


@lowers(fully_connected)
def _fc_onnx(ctx, node, ins):
    a = node.parsed
    x, w = ins[0], ins[1]
    if a.flatten or ctx.rank(x) == 2:
        if ctx.rank(x) != 2:
            x = ctx.op("Flatten", [x], axis=1)
        return ctx.op("Gemm", [x, w] + ins[2:], transB=1)
    y = ctx.op("MatMul", [x, ctx.op("Transpose", [w], perm=[1, 0])])
    return ctx.op("Add", [y, ins[2]]) if not a.no_bias else y
