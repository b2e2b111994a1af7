"""SSD's original contrib operators: `MultiBoxPrior` (anchor boxes) and `MultiBoxDetection`
(decode + per-class NMS), with MXNet 1.x's arithmetic and ordering."""
from __future__ import annotations

import numpy as np

from ...base import ShapeError
from .flops import multibox_detection_flops, multibox_prior_flops
from ..nnutil import CF
from ..attrs import Bool, FloatTuple, Int
from ..registry import register


# -- MultiBoxPrior ----------------------------------------------------------------------------
def _prior_shape(a, s):
    d = tuple(s[0])
    if len(d) < 4:
        raise ShapeError(f"MultiBoxPrior: data must be 4-D (batch, channel, y, x), got {d}")
    if not a.sizes or not a.ratios or len(a.steps) != 2 or len(a.offsets) != 2:
        raise ShapeError("MultiBoxPrior: needs sizes and ratios, and 2 steps and 2 offsets")
    return [(1, d[2] * d[3] * (len(a.sizes) + len(a.ratios) - 1), 4)]


@register("_contrib_MultiBoxPrior", "_npx_multibox_prior",
          attrs={"sizes": FloatTuple((1.0,)), "ratios": FloatTuple((1.0,)), "clip": Bool(False),
                 "steps": FloatTuple((-1.0, -1.0)), "offsets": FloatTuple((0.5, 0.5))},
          infer_shape=_prior_shape, strict=True, flops=multibox_prior_flops)
def multibox_prior(a, x):
    """Corner anchors per feature-map cell, row-major: every size at the first ratio, then the
    first size at every other ratio; steps <= 0 mean 1/height, 1/width."""
    oshape = _prior_shape(a, [x.shape])[0]
    f = np.float32
    H, W = x.shape[2], x.shape[3]
    sy, sx = (f(s) for s in a.steps)
    if sy <= 0 or sx <= 0:
        sy, sx = f(1) / f(H), f(1) / f(W)
    cy = (np.arange(H, dtype=f) + f(a.offsets[0])) * sy
    cx = (np.arange(W, dtype=f) + f(a.offsets[1])) * sx
    r0 = np.sqrt(f(a.ratios[0]))
    shapes = [(f(s), r0) for s in a.sizes] + [(f(a.sizes[0]), np.sqrt(f(r))) for r in a.ratios[1:]]
    half_w = np.array([s * f(H) / f(W) * r / f(2) for s, r in shapes], f)
    half_h = np.array([s / r / f(2) for s, r in shapes], f)
    cy, cx = cy[:, None, None], cx[None, :, None]
    out = np.stack(np.broadcast_arrays(cx - half_w, cy - half_h, cx + half_w, cy + half_h), -1)
    if a.clip:
        out = np.clip(out, f(0), f(1))
    return out.reshape(oshape).astype(x.dtype)


# -- MultiBoxDetection ------------------------------------------------------------------------
def _det_shape(a, s):
    c, l, an = (tuple(v) for v in s)
    if len(c) != 3 or len(l) != 2 or len(an) != 3 or an[2] != 4:
        raise ShapeError(f"MultiBoxDetection: expects cls_prob (B, C, A), loc_pred (B, A*4) and "
                         f"anchor (1, A, 4), got {c}, {l}, {an}")
    if c[2] != an[1] or l[1] != 4 * c[2]:
        raise ShapeError(f"MultiBoxDetection: anchor counts differ: {c}, {l}, {an}")
    if len(a.variances) != 4:
        raise ShapeError("MultiBoxDetection: variances must have 4 values")
    return [(c[0], an[1], 6)]


def _decode(a, loc, anchors):
    """Centre-offset decoding with variances, clipped to [0, 1] when `clip`."""
    dt = anchors.dtype.type
    vx, vy, vw, vh = (dt(np.float32(v)) for v in a.variances)
    al, at, ar, ab = anchors.T
    aw, ah = ar - al, ab - at
    ax, ay = (al + ar) / dt(2), (at + ab) / dt(2)
    ox, oy = loc[:, 0] * vx * aw + ax, loc[:, 1] * vy * ah + ay
    with np.errstate(over="ignore"):
        ow, oh = np.exp(loc[:, 2] * vw) * aw / dt(2), np.exp(loc[:, 3] * vh) * ah / dt(2)
    box = np.stack([ox - ow, oy - oh, ox + ow, oy + oh], -1)
    return np.maximum(dt(0), np.minimum(dt(1), box)) if a.clip else box


def _overlap(ref, others):
    w = np.maximum(0, np.minimum(ref[2], others[:, 2]) - np.maximum(ref[0], others[:, 0]))
    h = np.maximum(0, np.minimum(ref[3], others[:, 3]) - np.maximum(ref[1], others[:, 1]))
    i = w * h
    u = (ref[2] - ref[0]) * (ref[3] - ref[1]) + (others[:, 2] - others[:, 0]) * \
        (others[:, 3] - others[:, 1]) - i
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(u <= 0, i.dtype.type(0), i / u)


def _detect_one(a, prob, loc, anchors):
    """One batch: best foreground class per anchor, compaction, sort, topk, NMS (see the op)."""
    dt = prob.dtype.type
    fg = np.concatenate([np.full((1, prob.shape[1]), dt(-1)), prob[1:]])  # MXNet starts at -1
    best = np.argmax(fg, axis=0)           # first strict maximum; 0: no class beat -1
    score = fg[best, np.arange(prob.shape[1])]
    cls = np.where(score < dt(np.float32(a.threshold)), 0, best).astype(prob.dtype) - dt(1)
    boxes = _decode(a, loc.reshape(-1, 4), anchors)
    rows = np.concatenate([cls[:, None], score[:, None], boxes], 1)
    out = np.full(rows.shape, -1, prob.dtype)
    valid = rows[rows[:, 0] >= 0]
    out[:len(valid)] = valid
    if len(valid) < 1 or not 0 < a.nms_threshold <= 1:
        return out
    order = np.argsort(-valid[:, 1], kind="stable")
    keep = len(valid) if a.nms_topk <= 0 else min(a.nms_topk, len(valid))
    out[keep:len(valid), 0] = -1        # rows past topk keep their unsorted values, id -1
    out[:keep] = valid[order[:keep]]
    thresh = dt(np.float32(a.nms_threshold))
    for i in range(keep - 1):
        if out[i, 0] < 0:
            continue
        rest = out[i + 1:keep]
        hit = (rest[:, 0] >= 0) & (_overlap(out[i, 2:], rest[:, 2:]) >= thresh)
        if not a.force_suppress:
            hit &= rest[:, 0] == out[i, 0]
        out[i + 1:keep, 0] = np.where(hit, dt(-1), rest[:, 0])
    return out


@register("_contrib_MultiBoxDetection", "_npx_multibox_detection",
          attrs={"clip": Bool(True), "threshold": CF(0.01), "background_id": Int(0),
                 "nms_threshold": CF(0.5), "force_suppress": Bool(False),
                 "variances": FloatTuple((0.1, 0.1, 0.2, 0.2)), "nms_topk": Int(-1)},
          inputs=("cls_prob", "loc_pred", "anchor"), infer_shape=_det_shape, strict=True,
          flops=multibox_detection_flops)
def multibox_detection(a, cls_prob, loc_pred, anchor):
    """[class id, score, xmin, ymin, xmax, ymax] per anchor. Class 0 is background (MXNet ignores
    `background_id`); scores below `threshold` are dropped; kept rows move to the front in anchor
    order, are sorted by score (stable), cut to `nms_topk` and suppressed at IoU >= nms_threshold
    by setting their id to -1 (rows stay in place)."""
    _det_shape(a, [cls_prob.shape, loc_pred.shape, anchor.shape])
    anchors = anchor.reshape(-1, 4).astype(cls_prob.dtype, copy=False)
    return np.stack([_detect_one(a, cls_prob[b], loc_pred[b], anchors)
                     for b in range(cls_prob.shape[0])]).reshape(cls_prob.shape[0], -1, 6)
