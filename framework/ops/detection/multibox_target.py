"""`_contrib_MultiBoxTarget`: SSD training targets (anchor ↔ ground-truth matching, optional hard
negative mining), with MXNet 1.x's matching order.

Per batch, with IoU of every anchor against the valid labels (rows before the first class -1):
1. bipartite: repeatedly the globally best (anchor, label) pair among unmatched ones, first in
   anchor-major order on ties, while its IoU > 1e-6;
2. with overlap_threshold > 0, every other anchor whose best IoU exceeds it is positive too;
3. with negative_mining_ratio > 0, the int(positives · ratio) unmatched anchors whose best IoU is
   below negative_mining_thresh and whose background probability is lowest become negatives
   (stable order); otherwise every unmatched anchor is negative;
4. positives: class = label class + 1, mask 1, (dx, dy, log dw, log dh) / variances; negatives:
   class 0; the rest: class ignore_label. `minimum_negative_samples` is accepted and unused, as
   in MXNet.
"""
from __future__ import annotations

import numpy as np

from ...base import OperatorError, ShapeError
from ..nnutil import CF
from ..attrs import FloatTuple, Int
from ..registry import register


def _shape(a, s):
    an, lb, pr = (tuple(v) for v in s)
    if len(an) != 3 or an[0] != 1 or an[2] != 4 or len(lb) != 3 or lb[2] < 5 or len(pr) != 3 \
            or pr[2] != an[1] or pr[0] != lb[0]:
        raise ShapeError(f"MultiBoxTarget: expects anchor (1, A, 4), label (B, L, >=5) and "
                         f"cls_pred (B, C, A), got {an}, {lb}, {pr}")
    return [(lb[0], an[1] * 4), (lb[0], an[1] * 4), (lb[0], an[1])]


def _iou(anchors, gt):
    dt = anchors.dtype.type
    a, g = anchors[:, None], gt[None]
    w = np.maximum(dt(0), np.minimum(a[..., 2], g[..., 2]) - np.maximum(a[..., 0], g[..., 0]))
    h = np.maximum(dt(0), np.minimum(a[..., 3], g[..., 3]) - np.maximum(a[..., 1], g[..., 1]))
    inter = w * h
    union = (a[..., 2] - a[..., 0]) * (a[..., 3] - a[..., 1]) \
        + (g[..., 2] - g[..., 0]) * (g[..., 3] - g[..., 1]) - inter
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(union == 0, dt(0), inter / union).astype(np.float32)


def _bipartite(iou, flags, match):
    free = iou.copy()
    for _ in range(iou.shape[1]):
        k = int(np.argmax(free))
        j, g = divmod(k, iou.shape[1])
        if not free[j, g] > np.float32(1e-6):
            break
        match[j], flags[j] = g, 1
        free[j, :] = -np.inf
        free[:, g] = -np.inf


def _mine(a, iou, flags, prob_bg, n_pos):
    n_neg = min(int(n_pos * np.float32(a.negative_mining_ratio)), len(flags) - n_pos)
    if n_neg <= 0:
        return
    cand = np.flatnonzero((flags == -1) & (iou.max(1) < np.float32(a.negative_mining_thresh)))
    if len(cand) < n_neg:
        raise OperatorError(f"MultiBoxTarget: {n_neg} negatives wanted, only {len(cand)} qualify")
    order = cand[np.argsort(prob_bg[cand], kind="stable")]   # hardest (least background) first
    flags[order[:n_neg]] = 0


def _background_prob(pred):
    m = pred.max(0)
    e = np.exp(pred - m)
    return e[0] / e.sum(0)


def _targets(a, anchors, labels, pred):
    """(loc_target (A, 4), loc_mask (A, 4), cls_target (A,)) of one batch."""
    dt = anchors.dtype.type
    A = len(anchors)
    loc, mask = np.zeros((A, 4), anchors.dtype), np.zeros((A, 4), anchors.dtype)
    cls = np.full(A, dt(np.float32(a.ignore_label)), anchors.dtype)
    ends = np.flatnonzero(labels[:, 0] == -1)
    n_gt = ends[0] if len(ends) else len(labels)
    if n_gt == 0:
        return loc, mask, cls
    iou = _iou(anchors, labels[:n_gt, 1:5])
    flags, match = np.full(A, -1), np.full(A, -1)
    _bipartite(iou, flags, match)
    if a.overlap_threshold > 0:
        rest = flags != 1
        best = np.argmax(iou, 1)
        hit = rest & (iou[np.arange(A), best] > np.float32(a.overlap_threshold))
        match[hit], flags[hit] = best[hit], 1
    if a.negative_mining_ratio > 0:
        _mine(a, iou, flags, _background_prob(pred), int((flags == 1).sum()))
    else:
        flags[flags != 1] = 0
    pos = flags == 1
    g = labels[match[pos]]
    cls[pos] = g[:, 0] + dt(1)
    cls[flags == 0] = 0
    mask[pos] = 1
    loc[pos] = _encode(anchors[pos], g[:, 1:5], a.variances)
    return loc, mask, cls


def _encode(anc, gt, variances):
    f = np.float32
    vx, vy, vw, vh = (f(v) for v in variances)
    aw, ah = anc[:, 2] - anc[:, 0], anc[:, 3] - anc[:, 1]
    ax, ay = (anc[:, 0] + anc[:, 2]) * f(0.5), (anc[:, 1] + anc[:, 3]) * f(0.5)
    gw, gh = gt[:, 2] - gt[:, 0], gt[:, 3] - gt[:, 1]
    gx, gy = (gt[:, 0] + gt[:, 2]) * f(0.5), (gt[:, 1] + gt[:, 3]) * f(0.5)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.stack([(gx - ax) / aw / vx, (gy - ay) / ah / vy,
                         np.log(gw / aw) / vw, np.log(gh / ah) / vh], -1)


@register("_contrib_MultiBoxTarget", "_npx_multibox_target",
          attrs={"overlap_threshold": CF(0.5), "ignore_label": CF(-1.0),
                 "negative_mining_ratio": CF(-1.0), "negative_mining_thresh": CF(0.5),
                 "minimum_negative_samples": Int(0),
                 "variances": FloatTuple((0.1, 0.1, 0.2, 0.2))},
          inputs=("anchor", "label", "cls_pred"), num_outputs=3,
          output_names=("loc_target", "loc_mask", "cls_target"), infer_shape=_shape, strict=True)
def multibox_target(a, anchor, label, cls_pred):
    """SSD training targets; see the module docstring."""
    shapes = _shape(a, [anchor.shape, label.shape, cls_pred.shape])
    if len(a.variances) != 4:
        raise ShapeError("MultiBoxTarget: variances must have 4 values")
    anchors = anchor.reshape(-1, 4)
    per = [_targets(a, anchors, label[b].astype(anchor.dtype, copy=False), cls_pred[b])
           for b in range(label.shape[0])]
    return tuple(np.stack([p[i] for p in per]).reshape(s) for i, s in enumerate(shapes))
