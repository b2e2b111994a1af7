"""`_contrib_box_nms` on hand-built rows whose results follow from MXNet's rules (see
framework/ops/detection/box_nms.py): stable score order, strict thresholds, per-class suppression, topk,
-1 padding, format conversion."""
from __future__ import annotations

import numpy as np
import pytest

from framework.base import OperatorError, ShapeError
from framework.ops.registry import get_op

OP = get_op("_contrib_box_nms")


def nms(rows, **attrs):
    a = OP.parse_attrs({k: str(v) for k, v in attrs.items()})
    out, rec = OP.kernel(a, np.asarray(rows, np.float32))
    return out, rec


def row(cls, score, x1, y1, x2, y2):
    return np.array([cls, score, x1, y1, x2, y2], np.float32)


PAD = [-1.0] * 6


def test_aliases_are_one_entry():
    assert get_op("_npx_box_nms") is OP
    assert get_op("_contrib_box_non_maximum_suppression") is OP


def test_orders_by_score_and_pads():
    rows = [row(0, .1, 0, 0, 1, 1), row(0, .9, 2, 2, 3, 3), row(0, .5, 4, 4, 5, 5)]
    out, rec = nms(rows)
    np.testing.assert_array_equal(out, [rows[1], rows[2], rows[0]])
    np.testing.assert_array_equal(rec[:, 0], [1, 2, 0])


def test_equal_scores_keep_input_order_and_first_suppresses_later():
    same = row(0, .5, 0, 0, 2, 2)
    rows = [row(0, .5, 10, 10, 11, 11), same, same, row(0, .5, 20, 20, 21, 21)]
    out, rec = nms(rows)
    np.testing.assert_array_equal(out, [rows[0], rows[1], rows[3], PAD])
    np.testing.assert_array_equal(rec[:, 0], [0, 1, 3, -1])


def test_overlap_threshold_is_strict():
    rows = [row(0, .9, 0, 0, 2, 1), row(0, .8, 0, 0, 1, 1)]   # IoU exactly 0.5
    assert (nms(rows, overlap_thresh=0.5)[0][1] == rows[1]).all()
    assert (nms(rows, overlap_thresh=0.49)[0][1] == PAD).all()


def test_valid_threshold_is_strict_and_topk_limits_candidates():
    rows = [row(0, .2, 0, 0, 1, 1), row(0, .9, 2, 2, 3, 3), row(0, .5, 4, 4, 5, 5),
            row(0, .7, 6, 6, 7, 7)]
    out, _ = nms(rows, valid_thresh=0.2)
    np.testing.assert_array_equal(out, [rows[1], rows[3], rows[2], PAD])
    out, _ = nms(rows, topk=2)
    np.testing.assert_array_equal(out, [rows[1], rows[3], PAD, PAD])


def test_suppressed_box_does_not_suppress_others():
    # b overlaps a (suppressed by it); c overlaps b only: c survives
    a, b, c = row(0, .9, 0, 0, 2, 2), row(0, .8, 1, 0, 3, 2), row(0, .7, 2.5, 0, 4.5, 2)
    out, _ = nms([a, b, c], overlap_thresh=0.3)
    np.testing.assert_array_equal(out, [a, c, PAD])


def test_classes_and_force_suppress():
    a, b = row(1, .9, 0, 0, 2, 2), row(2, .8, 0, 0, 2, 2)
    assert (nms([a, b], id_index=0)[0] == [a, b]).all()
    assert (nms([a, b], id_index=0, force_suppress=True)[0] == [a, PAD]).all()
    assert (nms([a, b])[0] == [a, PAD]).all()                    # no id_index: one class


def test_background_id_rows_are_dropped():
    rows = [row(-1, .9, 0, 0, 1, 1), row(0, .8, 2, 2, 3, 3), row(3, .7, 4, 4, 5, 5)]
    np.testing.assert_array_equal(nms(rows, id_index=0)[0], [rows[1], rows[2], PAD])
    np.testing.assert_array_equal(nms(rows, id_index=0, background_id=3)[0],
                                  [rows[0], rows[1], PAD])
    np.testing.assert_array_equal(nms(rows)[0], [rows[0], rows[1], rows[2]])  # ids ignored


def test_batches_are_independent_and_all_filtered_is_all_minus_one():
    b0 = [row(0, .9, 0, 0, 1, 1), row(0, .1, 2, 2, 3, 3)]
    b1 = [row(0, .05, 0, 0, 1, 1), row(0, .01, 2, 2, 3, 3)]
    out, rec = nms([[b0, b1], [b1, b0]], valid_thresh=0.06)
    assert out.shape == (2, 2, 2, 6) and rec.shape == (2, 2, 2, 1)
    np.testing.assert_array_equal(out[0, 0], b0)
    np.testing.assert_array_equal(out[0, 1], [PAD, PAD])
    np.testing.assert_array_equal(rec[1, 1, :, 0], [3 * 2 + 0, 3 * 2 + 1])
    np.testing.assert_array_equal(nms([b1], valid_thresh=0.5)[0], [[PAD, PAD]])


def test_topk_zero_returns_input():
    rows = [row(0, .1, 0, 0, 1, 1), row(0, .2, 0, 0, 1, 1)]
    out, rec = nms(rows, topk=0)
    np.testing.assert_array_equal(out, rows)
    np.testing.assert_array_equal(rec[:, 0], [0, 1])


def test_format_conversion_skips_rows_starting_negative():
    rows = [row(0, .9, 4, 6, 2, 2), row(0, .8, -1, 20, 2, 2)]   # center form
    out, _ = nms(rows, in_format="center", out_format="corner")
    np.testing.assert_array_equal(out, [row(0, .9, 3, 5, 5, 7), rows[1]])
    back, _ = nms([row(0, .9, 3, 5, 5, 7)], out_format="center")
    np.testing.assert_array_equal(back, [row(0, .9, 4, 6, 2, 2)])


def test_center_format_overlap():
    a, b = row(0, .9, 1, 1, 2, 2), row(0, .8, 1.5, 1, 2, 2)   # IoU 1.0*2 / (4+4-2) = 1/3
    assert (nms([a, b], in_format="center", out_format="center", overlap_thresh=0.3)[0]
            == [a, PAD]).all()


def test_custom_columns():
    rows = np.array([[0, 0, 1, 1, .3], [0, 0, 1, 1, .6]], np.float32)
    out, _ = nms(rows, coord_start=0, score_index=4)
    np.testing.assert_array_equal(out, [rows[1], [-1] * 5])


@pytest.mark.parametrize("attrs, shape", [({}, (3, 4)), ({"id_index": 0}, (3, 5)),
                                          ({"score_index": 3}, (3, 6)), ({}, (6,))])
def test_bad_layouts_are_shape_errors(attrs, shape):
    with pytest.raises(ShapeError):
        nms(np.zeros(shape), **attrs)


def test_unknown_attribute_is_rejected():
    with pytest.raises(OperatorError):
        OP.parse_attrs({"overlap": "0.5"})


def _greedy_one_pair_at_a_time(rows, thresh, by_class):
    """The rule stated plainly: sort by score (stable), keep a box unless a kept earlier box
    of its class overlaps it by IoU > thresh; IoU in float32 as the kernel forms it."""
    order = sorted(range(len(rows)), key=lambda i: -rows[i][1])
    kept = []
    f = np.float32
    for i in order:
        x1, y1, x2, y2 = rows[i][2:]
        ok = True
        for j in kept:
            if by_class and rows[j][0] != rows[i][0]:
                continue
            u1, v1, u2, v2 = rows[j][2:]
            w = max(min(x2, u2) - max(x1, u1), f(0))
            h = max(min(y2, v2) - max(y1, v1), f(0))
            inter = f(w * h)
            union = f(f((u2 - u1) * (v2 - v1)) + f((x2 - x1) * (y2 - y1))) - inter
            if f(inter / union) > f(thresh):
                ok = False
                break
        if ok:
            kept.append(i)
    return kept


@pytest.mark.parametrize("by_class", [True, False])
def test_many_candidates_across_blocks_match_the_plain_rule(by_class):
    """Over 1000 candidates (several blocks of the blocked pass), with tied scores and dense
    overlaps, the survivors and their order are the plain rule's."""
    rng = np.random.default_rng(11)
    n = 1100
    xy = rng.uniform(0, 20, (n, 2)).astype(np.float32)
    wh = rng.uniform(1, 6, (n, 2)).astype(np.float32)
    rows = np.concatenate([rng.integers(0, 3, (n, 1)), rng.integers(1, 40, (n, 1)) / 40,
                           xy, xy + wh], 1).astype(np.float32)
    out, rec = nms(rows[None], overlap_thresh=0.3, id_index=0 if by_class else -1, topk=900)
    want = _greedy_one_pair_at_a_time(
        [list(r) for r in rows[np.argsort(-rows[:, 1], kind="stable")[:900]]], 0.3, by_class)
    top = np.argsort(-rows[:, 1], kind="stable")[:900]
    expect = top[want]
    assert 50 < len(expect) < 900
    np.testing.assert_array_equal(rec[0, :len(expect), 0], expect)
    assert (rec[0, len(expect):, 0] == -1).all()
    np.testing.assert_array_equal(out[0, :len(expect)], rows[expect])
