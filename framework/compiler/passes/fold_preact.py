"""Fold a pre-activation BatchNorm + ReLU into the 1x1 convolution it feeds (DenseNet's
BN → ReLU → 1x1 conv, ResNet v2's unpadded convs).

With s > 0 per channel: relu(s·x + t) = s·max(x, −t/s) + t, so
conv1x1(relu(s·x + t)) = (W·diag(s))·max(x, c) + W·t   with c = −t/s.
The affine part moves into the conv's weight and bias (once, here); what stays per call is one
`np.maximum` against a per-channel threshold (`_hs_chmax`) instead of multiply, add and max.
Only for 1x1 / unpadded / ungrouped `_hs_conv2d` (a padded conv would see its zero padding
turned into t), only when every s is positive and finite, and only when the affine's output
feeds nothing else.
"""
from __future__ import annotations

import numpy as np

from ...ops.compiled.nhwc import hs_conv2d as HS_CONV2D
from ...ops.compiled.nhwc_eltwise import hs_affine as HS_AFFINE, hs_chmax as HS_CHMAX
from ...symbol.graph import Node, Symbol
from .rewrite import consumers, rebuild


def fold_preact(sym: Symbol, params: dict[str, np.ndarray]):
    uses = consumers(sym)
    params = dict(params)

    def value(e):
        return params.get(e[0].name) if e[0].is_var else None

    def visit(n: Node, ins, done):
        if n.op is not HS_CONV2D:
            return None
        a = n.parsed
        src = n.inputs[0][0]
        if (tuple(a.kernel) != (1, 1) or any(a.pad) or a.num_group != 1
                or a.algo not in ("gemm", "gemm1x1")
                or src.op is not HS_AFFINE or uses.get(id(src), 0) != 1):
            return None
        sa = src.parsed
        if sa.act_type != "relu":
            return None
        scale, shift, w = value(src.inputs[1]), value(src.inputs[2]), value(n.inputs[1])
        post = value(n.inputs[2]) if a.with_scale else None
        b = None if a.no_bias else value(n.inputs[2 + a.with_scale])
        if (scale is None or shift is None or w is None or (not a.no_bias and b is None)
                or (a.with_scale and post is None)):
            return None
        if a.algo == "gemm1x1":                  # MXNet's (F, C, 1, 1) → GEMM-ready (C, F)
            w = w.reshape(w.shape[0], -1).T
        s = scale.astype(np.float64).reshape(-1)
        t = shift.astype(np.float64).reshape(-1)
        if w.ndim != 2 or s.size != w.shape[0] or not np.all(np.isfinite(s)) or not np.all(s > 0):
            return None
        w64 = w.astype(np.float64)
        if post is not None:                     # the conv's own output scale joins the weight
            w64 = w64 * post.astype(np.float64)[None, :]
        nb = w64.T @ t + (0.0 if b is None else b.astype(np.float64))
        thr_name, wname, bname = f"{src.name}_hs_thr", f"{n.name}_hs_pw", f"{n.name}_hs_pb"
        params[thr_name] = (-t / s).astype(scale.dtype)
        params[wname] = (w64 * s[:, None]).astype(w.dtype)
        params[bname] = nb.astype(w.dtype)
        m = Node(HS_CHMAX.name, src.name, {"axis": str(sa.axis)},
                 [done[id(src.inputs[0][0])][src.inputs[0][1]], (Node("null", thr_name), 0)],
                 op=HS_CHMAX)
        attrs = {**n.attrs, "no_bias": "0", "algo": "gemm", "with_scale": "0"}
        c = Node(HS_CONV2D.name, n.name, attrs,
                 [(m, 0), (Node("null", wname), 0), (Node("null", bname), 0)]
                 + ([ins[-1]] if a.with_sum else []), op=HS_CONV2D)
        return [(c, 0)]

    out = rebuild(sym, visit)
    used = set(out.list_inputs())
    return out, {k: v for k, v in params.items() if k in used}
