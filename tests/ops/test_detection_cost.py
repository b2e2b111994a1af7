"""FLOP estimates of the detection operators (framework/ops/detection/flops.py): present on every
entry, worst case as documented, and scaling with the attributes that set the work."""
from __future__ import annotations

import pytest

from framework.ops.registry import get_op


def flops(op: str, in_shapes, **attrs) -> int:
    d = get_op(op)
    a = d.parse_attrs({k: str(v) for k, v in attrs.items()})
    return d.flops(a, [tuple(s) for s in in_shapes], d.shapes(a, [tuple(s) for s in in_shapes]))


@pytest.mark.parametrize("op", ["_contrib_box_nms", "_contrib_box_decode", "_contrib_box_encode",
                                "_contrib_box_iou", "_contrib_bipartite_matching",
                                "_contrib_MultiBoxPrior", "_contrib_MultiBoxDetection",
                                "_contrib_Proposal", "_contrib_MultiProposal",
                                "_contrib_ROIAlign", "ROIPooling",
                                "_contrib_AdaptiveAvgPooling2D", "_contrib_BilinearResize2D"])
def test_every_detection_op_has_an_estimate(op):
    assert get_op(op).flops is not None


def test_box_nms_counts_every_candidate_pair_per_batch():
    full = flops("_contrib_box_nms", [(1, 1000, 6)], topk=-1)
    small = flops("_contrib_box_nms", [(1, 1000, 6)], topk=100)
    assert full > 1000 * 999 // 2 * 10 > small > 100 * 99 // 2 * 10
    assert flops("_contrib_box_nms", [(3, 1000, 6)], topk=100) == 3 * small


def test_roi_align_scales_with_outputs_and_samples():
    base = flops("_contrib_ROIAlign", [(1, 256, 32, 32), (10, 5)], pooled_size=(7, 7),
                 spatial_scale=0.25, sample_ratio=2)
    assert base >= 10 * 256 * 49 * 4 * 8                       # 4 samples, 4 taps each
    assert flops("_contrib_ROIAlign", [(1, 256, 32, 32), (20, 5)], pooled_size=(7, 7),
                 spatial_scale=0.25, sample_ratio=4) == 2 * 4 * base
    adaptive = flops("_contrib_ROIAlign", [(1, 256, 32, 32), (10, 5)], pooled_size=(7, 7),
                     spatial_scale=0.25, sample_ratio=-1)
    assert adaptive == base * 25 // 4                         # ceil(32/7)=5 samples a side


def test_box_decode_and_proposal_are_per_box():
    one = flops("_contrib_box_decode", [(1, 100, 4), (1, 100, 4)])
    assert flops("_contrib_box_decode", [(2, 100, 4), (1, 100, 4)]) == 2 * one > 0
    p = flops("_contrib_Proposal", [(1, 18, 10, 10), (1, 36, 10, 10), (1, 3)],
              rpn_pre_nms_top_n=300, rpn_post_nms_top_n=50)
    assert p >= 300 * 299 // 2 * 10 + 900 * 20
