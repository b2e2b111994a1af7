"""Region proposals of the original MXNet Faster R-CNN: `_contrib_Proposal` (one image) and
`_contrib_MultiProposal` (a batch), float32 like MXNet's CPU kernels.

Per image: anchors (ratios × scales around a feature_stride cell, shifted over the map) decoded by
the bbox deltas (pixel convention, +1 sizes) and clipped to the image; anchors outside im_info's
real extent and boxes smaller than rpn_min_size·scale get score -1 (small ones are also grown by
min_size/2 per side, as MXNet does); a stable descending sort keeps rpn_pre_nms_top_n; greedy NMS
(IoU > threshold) keeps up to rpn_post_nms_top_n; the output repeats the kept rois cyclically to
fill rpn_post_nms_top_n rows of [batch_index, x1, y1, x2, y2].
"""
from __future__ import annotations

import numpy as np

from ...base import ShapeError
from .flops import proposal_flops
from ..nnutil import CF
from ..attrs import Bool, FloatTuple, Int
from ..registry import register

F = np.float32
_ATTRS = {"rpn_pre_nms_top_n": Int(6000), "rpn_post_nms_top_n": Int(300), "threshold": CF(0.7),
          "rpn_min_size": Int(16), "scales": FloatTuple((4.0, 8.0, 16.0, 32.0)),
          "ratios": FloatTuple((0.5, 1.0, 2.0)), "feature_stride": Int(16),
          "output_score": Bool(False), "iou_loss": Bool(False)}


def _base_anchors(a) -> np.ndarray:
    """(A, 4) anchors of the cell at the origin, ratio-major like MXNet's GenerateAnchors."""
    w = h = F(a.feature_stride)
    ctr = F(0.5 * (float(w) - 1.0))
    out = []
    for ratio in a.ratios:
        for scale in a.scales:
            size_ratios = np.floor(w * h / F(ratio))
            nw = np.floor(np.sqrt(size_ratios) + F(0.5)) * F(scale)
            nh = np.floor(nw / F(scale) * F(ratio) + F(0.5)) * F(scale)
            out.append([ctr - F(0.5) * (nw - F(1)), ctr - F(0.5) * (nh - F(1)),
                        ctr + F(0.5) * (nw - F(1)), ctr + F(0.5) * (nh - F(1))])
    return np.array(out, F)


def _decode(a, anchors, deltas, info):
    """Boxes (H*W*A, 4) from anchors and deltas (4A, H, W), clipped to the image."""
    d = deltas.reshape(-1, 4, *deltas.shape[1:]).transpose(2, 3, 0, 1).reshape(-1, 4)
    if a.iou_loss:
        box = anchors + d
    else:
        w = anchors[:, 2] - anchors[:, 0] + F(1)
        h = anchors[:, 3] - anchors[:, 1] + F(1)
        cx = (anchors[:, 0] + 0.5 * (w.astype(np.float64) - 1.0)).astype(F)
        cy = (anchors[:, 1] + 0.5 * (h.astype(np.float64) - 1.0)).astype(F)
        pcx, pcy = d[:, 0] * w + cx, d[:, 1] * h + cy
        with np.errstate(over="ignore"):
            pw, ph = np.exp(d[:, 2]) * w, np.exp(d[:, 3]) * h
        hw = 0.5 * (pw.astype(np.float64) - 1.0)
        hh = 0.5 * (ph.astype(np.float64) - 1.0)
        box = np.stack([pcx - hw, pcy - hh, pcx + hw, pcy + hh], -1).astype(F)
    lim = np.array([info[1], info[0], info[1], info[0]], F) - F(1)
    return np.maximum(np.minimum(box, lim), F(0))


def _nms(dets, thresh: float, limit: int) -> list[int]:
    area = (dets[:, 2] - dets[:, 0] + F(1)) * (dets[:, 3] - dets[:, 1] + F(1))
    alive = np.ones(len(dets), bool)
    keep: list[int] = []
    for i in range(len(dets)):
        if len(keep) >= limit:
            break
        if not alive[i]:
            continue
        keep.append(i)
        r = dets[i + 1:]
        d = dets[i]
        w = np.maximum(F(0), np.minimum(d[2], r[:, 2]) - np.maximum(d[0], r[:, 0]) + F(1))
        h = np.maximum(F(0), np.minimum(d[3], r[:, 3]) - np.maximum(d[1], r[:, 1]) + F(1))
        inter = w * h
        with np.errstate(divide="ignore", invalid="ignore"):
            alive[i + 1:] &= ~(inter / (area[i] + area[i + 1:] - inter) > F(thresh))
    return keep


def _image(a, fg, deltas, info, base):
    """Proposals of one image: (rpn_post_nms_top_n, 4) boxes and their scores."""
    A, H, W = fg.shape
    fs = a.feature_stride
    ys, xs = np.meshgrid(np.arange(H), np.arange(W), indexing="ij")
    shift = np.stack([xs, ys, xs, ys], -1).reshape(H, W, 1, 4) * fs
    anchors = (base[None, None] + shift.astype(F)).reshape(-1, 4)
    score = fg.transpose(1, 2, 0).reshape(-1).astype(F)
    boxes = _decode(a, anchors, deltas, info)
    real_h, real_w = int(info[0] / F(fs)), int(info[1] / F(fs))
    outside = ((ys >= real_h) | (xs >= real_w))[..., None].repeat(A, -1).reshape(-1)
    score = np.where(outside, F(-1), score)
    min_size = F(a.rpn_min_size) * info[2]
    small = ((boxes[:, 2] - boxes[:, 0] + F(1) < min_size)
             | (boxes[:, 3] - boxes[:, 1] + F(1) < min_size))
    grow = np.array([-1, -1, 1, 1], F) * (min_size / F(2))
    boxes = np.where(small[:, None], boxes + grow, boxes)
    score = np.where(small, F(-1), score)
    count = len(score)
    pre = min(a.rpn_pre_nms_top_n if a.rpn_pre_nms_top_n > 0 else count, count)
    order = np.argsort(-score, kind="stable")[:pre]
    keep = _nms(boxes[order], a.threshold, min(a.rpn_post_nms_top_n, pre))
    rows = order[np.array(keep)[np.arange(a.rpn_post_nms_top_n) % len(keep)]]
    return boxes[rows], score[rows]


def _check(op: str, s):
    c, b, i = (tuple(v) for v in s)
    if len(c) != 4 or c[1] % 2 or b != (c[0], 2 * c[1], c[2], c[3]) or i != (c[0], 3):
        raise ShapeError(f"{op}: expects cls_prob (N, 2A, H, W), bbox_pred (N, 4A, H, W) and "
                         f"im_info (N, 3), got {c}, {b}, {i}")
    return c


def _proposals(a, cls_prob, bbox_pred, im_info):
    n, c2 = cls_prob.shape[:2]
    base = _base_anchors(a)
    if len(base) != c2 // 2:
        raise ShapeError(f"Proposal: {c2 // 2} anchors per cell in cls_prob, but ratios × scales "
                         f"gives {len(base)}")
    rois, scores = [], []
    for b in range(n):
        box, sc = _image(a, cls_prob[b, c2 // 2:].astype(F), bbox_pred[b].astype(F),
                         im_info[b].astype(F), base)
        rois.append(np.concatenate([np.full((len(box), 1), b, F), box], 1))
        scores.append(sc[:, None])
    return np.concatenate(rois), np.concatenate(scores)


def _prop_shape(op):
    def shape(a, s):
        n = _check(op, s)[0]
        if op == "Proposal" and n != 1:
            raise ShapeError("Proposal: handles one image per call (MultiProposal takes a batch)")
        rows = n * a.rpn_post_nms_top_n
        return [(rows, 5), (rows, 1)]
    return shape


_COMMON = dict(attrs=_ATTRS, inputs=("cls_prob", "bbox_pred", "im_info"), num_outputs=2,
               num_visible=lambda a: 2 if a.output_score else 1, output_names=("output", "score"),
               infer_type=lambda a, d: [np.dtype(F)] * 2, strict=True, flops=proposal_flops)


@register("_contrib_Proposal", infer_shape=_prop_shape("Proposal"), **_COMMON)
def proposal(a, cls_prob, bbox_pred, im_info):
    """RPN proposals of one image; see the module docstring."""
    _prop_shape("Proposal")(a, [cls_prob.shape, bbox_pred.shape, im_info.shape])
    return _proposals(a, cls_prob, bbox_pred, im_info)


@register("_contrib_MultiProposal", infer_shape=_prop_shape("MultiProposal"), **_COMMON)
def multi_proposal(a, cls_prob, bbox_pred, im_info):
    """RPN proposals of each image of a batch, rpn_post_nms_top_n rows per image."""
    _prop_shape("MultiProposal")(a, [cls_prob.shape, bbox_pred.shape, im_info.shape])
    return _proposals(a, cls_prob, bbox_pred, im_info)
