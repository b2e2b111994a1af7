"""FLOP estimates of the detection operators (box_nms, box_decode, ROIAlign, Proposal, …).

Their work depends on the data (how many boxes pass the score threshold, how many NMS keeps,
how large each roi is), so each rule counts the worst case the attributes allow: every
candidate survives to be compared with every later one, an adaptive ROIAlign grid covers the
whole feature map. Arithmetic and comparisons count one each; the per-item costs below follow
the kernels' formulas (corner boxes; the centre form costs about the same).
"""
from __future__ import annotations

import math

from ..nnutil import prod as _prod

PAIR_IOU = 13          # intersection 9 (2 min, 2 max, 2 sub, 2 clamps, 1 mul), union 3, compare 1
BOX_AREA = 3
BOX_DECODE = 24        # anchor to centre 4, offsets 2×3, exp sizes 2×3, back to corners 4, clip 4
BOX_ENCODE = 24
BILINEAR_TAP = 9       # 4 weights × (mul + add) plus the average's share


def sort_cost(n: int) -> int:
    """Comparisons of a comparison sort of n keys."""
    return int(n * math.log2(n)) if n > 1 else 0


def nms_cost(n: int, k: int) -> int:
    """Greedy NMS over n rows of which the best k take part: threshold test of every row, the
    sort, the areas and the IoU of every pair of candidates."""
    k = min(n, k) if k >= 0 else n
    return n + sort_cost(n) + k * BOX_AREA + k * (k - 1) // 2 * PAIR_IOU


def box_nms_flops(a, ins, outs) -> int:
    shape = ins[0]
    batches = _prod(shape[:-2])
    return batches * nms_cost(shape[-2], a.topk)


def box_decode_flops(a, ins, outs) -> int:
    return _prod(outs[0][:-1]) * BOX_DECODE


def box_encode_flops(a, ins, outs) -> int:
    return _prod(outs[0][:-1]) * BOX_ENCODE


def box_iou_flops(a, ins, outs) -> int:
    return _prod(outs[0]) * PAIR_IOU


def bipartite_flops(a, ins, outs) -> int:
    """Sort every score of each (rows, cols) matrix, then one greedy pass over them."""
    shape = ins[0]
    per = shape[-2] * shape[-1]
    return _prod(shape[:-2]) * (sort_cost(per) + per)


def multibox_detection_flops(a, ins, outs) -> int:
    """Per image: best class of every anchor, decode, then NMS of the kept anchors."""
    batch, classes, anchors = ins[0]
    per = anchors * classes + anchors * BOX_DECODE + nms_cost(anchors, a.nms_topk)
    return batch * per


def proposal_flops(a, ins, outs) -> int:
    """Per image: decode every anchor, sort the scores, NMS of the top rpn_pre_nms_top_n."""
    batch, two_a, h, w = ins[0]
    anchors = two_a // 2 * h * w
    pre = min(anchors, a.rpn_pre_nms_top_n) if a.rpn_pre_nms_top_n > 0 else anchors
    return batch * (anchors * BOX_DECODE + nms_cost(anchors, pre))


def roi_align_flops(a, ins, outs) -> int:
    """Every output value averages grid_h × grid_w bilinear samples; an adaptive grid
    (sample_ratio <= 0) is counted for a roi covering the feature map."""
    _, _, h, w = ins[0]
    ph, pw = a.pooled_size
    gh = a.sample_ratio if a.sample_ratio > 0 else max(1, math.ceil(h / ph))
    gw = a.sample_ratio if a.sample_ratio > 0 else max(1, math.ceil(w / pw))
    return _prod(outs[0]) * gh * gw * BILINEAR_TAP


def roi_pooling_flops(a, ins, outs) -> int:
    """Every output value is the max of its bin, counted for a roi covering the feature map."""
    _, _, h, w = ins[0]
    ph, pw = a.pooled_size
    return _prod(outs[0]) * math.ceil(h / ph) * math.ceil(w / pw)


def multibox_prior_flops(a, ins, outs) -> int:
    return _prod(outs[0])
