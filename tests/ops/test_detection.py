"""Box coding, matching, ROI and MultiBox operators on hand-built cases whose results follow
from MXNet's definitions (the random-input comparisons with MXNet are in test_contrib_refs.py)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from framework.base import GraphFormatError, OperatorError, ShapeError
from framework.gluon import SymbolBlock
from framework.ops.registry import get_op

f32 = np.float32


def run(name, *inputs, **attrs):
    op = get_op(name)
    a = op.parse_attrs({k: str(v) for k, v in attrs.items()})
    return op.kernel(a, *[np.asarray(x, f32) for x in inputs])


@pytest.mark.parametrize("names", [
    ("_contrib_box_iou", "_npx_box_iou"), ("_contrib_box_decode", "_npx_box_decode"),
    ("_contrib_box_encode", "_npx_box_encode"),
    ("_contrib_bipartite_matching", "_npx_bipartite_matching"),
    ("ROIPooling", "_npx_roi_pooling"), ("_contrib_MultiBoxPrior", "_npx_multibox_prior"),
    ("_contrib_MultiBoxDetection", "_npx_multibox_detection"),
    ("_contrib_MultiBoxTarget", "_npx_multibox_target")])
def test_one_entry_per_operator(names):
    assert len({id(get_op(n)) for n in names}) == 1


def test_box_iou_corner_and_center():
    iou = run("_contrib_box_iou", [[0, 0, 2, 2]], [[1, 1, 3, 3], [5, 5, 6, 6], [0, 0, 2, 2]])
    np.testing.assert_allclose(iou, [[1 / 7, 0, 1]], rtol=1e-6)
    c = run("_contrib_box_iou", [[1, 1, 2, 2]], [[2, 2, 2, 2]], format="center")
    np.testing.assert_allclose(c, [[1 / 7]], rtol=1e-6)
    assert run("_contrib_box_iou", np.zeros((2, 3, 4)), np.zeros((5, 4))).shape == (2, 3, 5)


def test_box_decode_zero_offsets_give_the_anchor():
    anchors = [[[5, 5, 2, 4]]]                                 # centre form
    np.testing.assert_array_equal(run("_contrib_box_decode", [[[0, 0, 0, 0]]], anchors),
                                  [[[4, 3, 6, 7]]])
    corner = [[[4, 3, 6, 7]]]
    out = run("_contrib_box_decode", [[[1, 0, np.log(2), 0]]], corner, format="corner")
    np.testing.assert_allclose(out, [[[5, 3, 9, 7]]], rtol=1e-6)   # shifted a width, doubled
    capped = run("_contrib_box_decode", [[[0, 0, 5, 5]]], corner, format="corner", clip=0.0001)
    np.testing.assert_allclose(capped, [[[4, 3, 6, 7]]], rtol=1e-3)


def test_box_encode_inverts_decode_and_masks_negatives():
    anchors = f32([[[4, 3, 6, 7], [0, 0, 1, 1]]])
    refs = f32([[[5, 3, 9, 7]]])
    t, m = run("_contrib_box_encode", [[1, 0]], [[0, 0]], anchors, refs, [0, 0, 0, 0],
               [1, 1, 1, 1])
    np.testing.assert_allclose(t[0, 0], [1, 0, np.log(2), 0], rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(t[0, 1], 0)
    np.testing.assert_array_equal(m, [[[1] * 4, [0] * 4]])


def test_bipartite_matching_greedy_threshold_and_topk_quirk():
    s = [[0.9, 0.8, 0.1], [0.85, 0.2, 0.7]]
    rows, cols = run("_contrib_bipartite_matching", s, threshold=0.5)
    np.testing.assert_array_equal(rows, [0, 2])                # 0.9 first, then 0.7
    np.testing.assert_array_equal(cols, [0, -1, 1])
    rows, _ = run("_contrib_bipartite_matching", s, threshold=0.75)
    np.testing.assert_array_equal(rows, [0, -1])               # 0.7 ends the walk
    rows, _ = run("_contrib_bipartite_matching", s, threshold=0.5, topk=1)
    np.testing.assert_array_equal(rows, [0, 2])                # MXNet keeps topk + 1
    rows, _ = run("_contrib_bipartite_matching", s, threshold=0.5, is_ascend=True)
    np.testing.assert_array_equal(rows, [2, 1])                # smallest first: 0.1, 0.2
    with pytest.raises(OperatorError):
        get_op("_contrib_bipartite_matching").parse_attrs({})  # threshold is required


def test_roi_align_constant_map_and_negative_batch():
    x = np.full((1, 2, 6, 6), 3.0, f32)
    rois = [[0, 0, 0, 4, 4], [-1, 0, 0, 4, 4]]
    out = run("_contrib_ROIAlign", x, rois, pooled_size=(2, 2), spatial_scale=1.0, sample_ratio=2)
    np.testing.assert_allclose(out[0], 3.0, rtol=1e-6)
    np.testing.assert_array_equal(out[1], 0)
    with pytest.raises(OperatorError):
        run("_contrib_ROIAlign", x, [[0, 2, 2, 2, 3]], pooled_size=(2, 2), spatial_scale=1.0,
            aligned=True)


def test_roi_align_into_a_reused_buffer():
    """out= (a static plan's reused buffer, holding the last call's values): every row is
    rewritten, those of rois with a negative batch index to zeros."""
    op = get_op("_contrib_ROIAlign")
    a = op.parse_attrs({"pooled_size": "(2, 2)", "spatial_scale": "1.0", "sample_ratio": "2"})
    x = np.full((1, 2, 6, 6), 3.0, f32)
    rois = np.array([[0, 0, 0, 4, 4], [-1, 0, 0, 4, 4]], f32)
    buf = np.full((2, 2, 2, 2), 7.0, f32)
    out = op.kernel(a, x, rois, out=buf)
    assert out is buf
    np.testing.assert_allclose(buf[0], 3.0, rtol=1e-6)
    np.testing.assert_array_equal(buf[1], 0)


def test_roi_align_bilinear_sample():
    x = np.arange(16, dtype=f32).reshape(1, 1, 4, 4)           # value = 4y + x
    out = run("_contrib_ROIAlign", x, [[0, 1, 1, 2, 2]], pooled_size=(1, 1), spatial_scale=1.0,
              sample_ratio=1)                                  # one sample at (1.5, 1.5)
    np.testing.assert_allclose(out, [[[[4 * 1.5 + 1.5]]]], rtol=1e-6)


def test_roi_pooling_max_and_invalid_batch():
    x = np.arange(16, dtype=f32).reshape(1, 1, 4, 4)
    out, idx = run("ROIPooling", x, [[0, 0, 0, 3, 3], [1, 0, 0, 3, 3]], pooled_size=(2, 2),
                   spatial_scale=1.0)
    np.testing.assert_array_equal(out[0, 0], [[5, 7], [13, 15]])
    np.testing.assert_array_equal(idx[0, 0], [[5, 7], [13, 15]])
    np.testing.assert_array_equal(out[1], 0)


def test_multibox_prior_layout():
    out = run("_contrib_MultiBoxPrior", np.zeros((1, 1, 1, 2)), sizes=(0.5, 0.25), ratios=(1, 4))
    # cell centres x = 0.25, 0.75 (steps 1/W), y = 0.5; per cell: sizes at ratio 1, then ratio 4
    np.testing.assert_allclose(out[0, :3], [[0.25 - 0.125, 0.25, 0.375, 0.75],
                                            [0.25 - 0.0625, 0.375, 0.3125, 0.625],
                                            [0.25 - 0.25, 0.375, 0.5, 0.625]], rtol=1e-6)
    assert out.shape == (1, 6, 4)


def test_multibox_detection_background_threshold_and_suppression():
    anchors = [[[0.1, 0.1, 0.3, 0.3], [0.1, 0.1, 0.3, 0.3], [0.6, 0.6, 0.8, 0.8]]]
    prob = [[[0.1, 0.2, 0.9], [0.8, 0.7, 0.05], [0.1, 0.1, 0.05]]]   # (B, C=3, A=3)
    out = run("_contrib_MultiBoxDetection", prob, np.zeros((1, 12)), anchors, threshold=0.06)
    # anchor 2: best foreground 0.05 < threshold → dropped; anchor 1 suppressed by anchor 0
    np.testing.assert_allclose(out[0, :, :2], [[0, 0.8], [-1, 0.7], [-1, -1]], rtol=1e-6)
    np.testing.assert_allclose(out[0, 0, 2:], [0.1, 0.1, 0.3, 0.3], rtol=1e-6)


def test_multibox_target_matches_best_anchor():
    anchors = [[[0, 0, 0.5, 0.5], [0.5, 0.5, 1, 1], [0, 0.5, 0.5, 1]]]
    labels = [[[2, 0.5, 0.5, 1, 1], [-1, -1, -1, -1, -1]]]
    loc, mask, cls = run("_contrib_MultiBoxTarget", anchors, labels, np.zeros((1, 4, 3)))
    np.testing.assert_array_equal(cls, [[0, 3, 0]])
    np.testing.assert_array_equal(mask, [[0] * 4 + [1] * 4 + [0] * 4])
    np.testing.assert_allclose(loc[0, 4:8], 0, atol=1e-7)


def test_proposal_needs_one_image_and_matching_anchor_count():
    cls, box, info = np.zeros((2, 2 * 12, 2, 2)), np.zeros((2, 4 * 12, 2, 2)), np.ones((2, 3))
    with pytest.raises(ShapeError):
        run("_contrib_Proposal", cls, box, info)
    with pytest.raises(ShapeError):
        run("_contrib_MultiProposal", cls[:, :4], box[:, :8], info)


def test_missing_operator_fails_at_load_naming_node_and_op(tmp_path):
    graph = {"nodes": [{"op": "null", "name": "data", "inputs": []},
                       {"op": "null", "name": "rois", "inputs": []},
                       {"op": "_contrib_count_sketch", "name": "sketch0",   # MXNet GPU-only op
                        "attrs": {"out_dim": "4"}, "inputs": [[0, 0, 0], [1, 0, 0]]}],
             "arg_nodes": [0, 1], "heads": [[2, 0, 0]], "attrs": {"mxnet_version": ["int", 10901]}}
    path = tmp_path / "m-symbol.json"
    path.write_text(json.dumps(graph))
    with pytest.raises(GraphFormatError, match="_contrib_count_sketch.*node 'sketch0'"):
        SymbolBlock.imports(str(path), ["data"])
