"""Fold inference-mode BatchNorm into the Convolution / FullyConnected that feeds it.

y = gamma·(conv(x, W) + b − mean)/sqrt(var + eps) + beta  ==  conv(x, W·s) + (b − mean)·s + beta
with s = gamma/sqrt(var + eps) per output channel (gamma = 1 under fix_gamma). Applies only when
the producer's output feeds nothing but this BatchNorm, the BN normalises the channel axis (1,
or the same axis counted from the end),
and all weights are known variables. New parameters are named `<bn node>_fold_weight/_bias`.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from ...ops.nn.conv import convolution as CONVOLUTION
from ...ops.nn.dense import fully_connected as FULLY_CONNECTED
from ...ops.nn.norm import batch_norm as BATCH_NORM
from ...symbol.graph import Node, Symbol
from .rewrite import consumers, copy_node, rebuild


def _channel_axis(axis: int, prod: Node) -> bool:
    """Whether BatchNorm's `axis` is the producer's channel axis (1, or counted from the end of
    a convolution's output: -3 for 2-D, -4 for 3-D)."""
    if axis == 1:
        return True
    return prod.op is CONVOLUTION and axis == -(len(prod.parsed.kernel) + 1)


def fold_batchnorm(sym: Symbol, params: dict[str, np.ndarray],
                   keep: Callable[[Node], bool] | None = None
                   ) -> tuple[Symbol, dict[str, np.ndarray]]:
    """`keep(producer)`: leave that producer's BatchNorm unfolded (a later pass applies it
    without copying the weight)."""
    uses = consumers(sym)
    params = dict(params)

    def var_value(entry):
        node, _ = entry
        return params.get(node.name) if node.is_var else None

    def visit(n: Node, ins, done):
        if n.op is not BATCH_NORM or n.parsed.get("output_mean_var"):
            return None
        prod_old = n.inputs[0][0]
        if prod_old.op not in (CONVOLUTION, FULLY_CONNECTED) or uses.get(id(prod_old), 0) != 1:
            return None
        if keep is not None and keep(prod_old):
            return None
        if not _channel_axis(n.parsed.axis, prod_old):
            return None
        if prod_old.op is CONVOLUTION and \
                prod_old.parsed.get("layout") not in (None, "NCW", "NCHW", "NCDHW"):
            return None
        stats = [var_value(e) for e in n.inputs[1:5]]
        w = var_value(prod_old.inputs[1])
        if any(s is None for s in stats) or w is None:
            return None
        gamma, beta, mean, var = (s.astype(np.float64) for s in stats)
        if n.parsed.fix_gamma:
            gamma = np.ones_like(gamma)
        scale = gamma / np.sqrt(var + n.parsed.eps)
        b = np.zeros_like(mean) if prod_old.parsed.no_bias else var_value(prod_old.inputs[2])
        if b is None:
            return None
        new_w = (w.astype(np.float64) * scale.reshape((-1,) + (1,) * (w.ndim - 1))).astype(w.dtype)
        new_b = ((b.astype(np.float64) - mean) * scale + beta).astype(w.dtype)
        wname, bname = f"{n.name}_fold_weight", f"{n.name}_fold_bias"
        params[wname], params[bname] = new_w, new_b
        data_entry = done[id(prod_old.inputs[0][0])][prod_old.inputs[0][1]]
        prod_new = copy_node(prod_old, [data_entry, (Node("null", wname), 0),
                                        (Node("null", bname), 0)], done,
                             {**prod_old.attrs, "no_bias": "0"})
        return [(prod_new, 0)] + [(prod_new, 0)] * (n.num_outputs() - 1)

    out = rebuild(sym, visit)
    used = set(out.list_inputs())
    return out, {k: v for k, v in params.items() if k in used}
