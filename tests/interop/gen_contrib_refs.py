"""Record MXNet 1.9.1's outputs of the contrib operators GluonCV uses, on random inputs (run in the
MXNet 1.9.1 venv) → tests/fixtures/contrib_ops.npz, read by tests/ops/test_contrib_refs.py.

Scores are distinct (a permutation scaled into (0, 1)) so NMS and matching never compare ties;
the hand-built tests cover tie-breaking.

    python tests/interop/gen_contrib_refs.py
"""
from __future__ import annotations

import json
import os
import warnings

warnings.simplefilter("ignore")
import mxnet as mx  # noqa: E402
import numpy as np  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "contrib_ops.npz")
rng = np.random.default_rng(7)


def boxes(shape, size=20.0):
    xy = rng.uniform(0, size, shape + (2,))
    wh = rng.uniform(1, size / 2, shape + (2,))
    return np.concatenate([xy, xy + wh], -1).astype(np.float32)


def unit_boxes(n):
    xy = rng.uniform(0, 0.7, (n, 2))
    return np.concatenate([xy, xy + rng.uniform(0.1, 0.3, (n, 2))], -1).astype(np.float32)


def nms_rows(batch, n, ids=4):
    s = (rng.permutation(int(np.prod(batch)) * n).reshape(batch + (n,)) + 1.0) / (np.prod(batch) * n + 1)
    cls = rng.integers(-1, ids, batch + (n,)).astype(np.float32)
    return np.concatenate([cls[..., None], s[..., None].astype(np.float32), boxes(batch + (n,))], -1)


def cases():
    d = nms_rows((2,), 40)
    yield "_contrib_box_nms", {}, [d]
    yield "_contrib_box_nms", {"overlap_thresh": "0.3", "valid_thresh": "0.2", "topk": "25",
                               "id_index": "0", "score_index": "1", "coord_start": "2"}, [d]
    yield "_contrib_box_nms", {"overlap_thresh": "0.3", "id_index": "0", "force_suppress": "True"}, [d]
    yield "_contrib_box_nms", {"id_index": "0", "background_id": "0", "topk": "10"}, [d]
    yield "_contrib_box_nms", {"in_format": "center", "out_format": "corner", "id_index": "0"}, [d]
    yield "_contrib_box_nms", {"out_format": "center", "overlap_thresh": "0.2"}, [d]
    yield "_contrib_box_nms", {"topk": "0"}, [d]
    yield "_contrib_box_nms", {"valid_thresh": "2"}, [d]
    yield "_contrib_box_nms", {"id_index": "0"}, [nms_rows((2, 3), 15)]
    g = np.concatenate([d[..., 2:6], d[..., 1:2]], -1)   # coordinates first, score last
    yield "_contrib_box_nms", {"coord_start": "0", "score_index": "4"}, [g]
    yield "_contrib_box_iou", {}, [boxes((5,)), boxes((2, 3))]
    yield "_contrib_box_iou", {"format": "center"}, [boxes((2, 4)), boxes((6,))]
    anc = boxes((1, 30))
    off = rng.normal(0, 1, (2, 30, 4)).astype(np.float32)
    yield "_contrib_box_decode", {}, [off, anc]
    yield "_contrib_box_decode", {"format": "corner", "std0": "0.1", "std1": "0.1",
                                  "std2": "0.2", "std3": "0.2", "clip": "0.5"}, [off, anc]
    samples = rng.choice([-1.0, 0.0, 1.0], (2, 30)).astype(np.float32)
    matches = rng.integers(0, 6, (2, 30)).astype(np.float32)
    yield "_contrib_box_encode", {}, [samples, matches, np.repeat(anc, 2, 0), boxes((2, 6)),
                                      np.array([0, 0.1, 0, 0.2], np.float32),
                                      np.array([0.1, 0.1, 0.2, 0.2], np.float32)]
    sc = (rng.permutation(2 * 7 * 5).reshape(2, 7, 5) / 70.0).astype(np.float32)
    yield "_contrib_bipartite_matching", {"threshold": "0.3"}, [sc]
    yield "_contrib_bipartite_matching", {"threshold": "0.6", "is_ascend": "True", "topk": "2"}, [sc]
    feat = rng.normal(0, 1, (2, 8, 12, 10)).astype(np.float32)
    rois = np.concatenate([rng.integers(0, 2, (9, 1)).astype(np.float32),
                           boxes((9,), 44.0) - 4.0], -1)
    yield "_contrib_ROIAlign", {"pooled_size": "(3, 2)", "spatial_scale": "0.25",
                                "sample_ratio": "2"}, [feat, rois]
    yield "_contrib_ROIAlign", {"pooled_size": "(2, 2)", "spatial_scale": "0.25"}, [feat, rois[1:]]
    yield "_contrib_ROIAlign", {"pooled_size": "(2, 2)", "spatial_scale": "0.25",
                                "sample_ratio": "3", "aligned": "True"}, [feat, rois[1:]]
    yield "_contrib_ROIAlign", {"pooled_size": "(2, 2)", "spatial_scale": "0.25",
                                "sample_ratio": "2", "position_sensitive": "True"}, [feat, rois[1:]]
    yield "ROIPooling", {"pooled_size": "(3, 3)", "spatial_scale": "0.25"}, [feat, rois]
    fm = np.zeros((2, 3, 4, 5), np.float32)
    yield "_contrib_MultiBoxPrior", {"sizes": "(0.3, 0.5, 0.1)", "ratios": "(1, 2, 0.5)"}, [fm]
    yield "_contrib_MultiBoxPrior", {"sizes": "(0.7,)", "ratios": "(1, 3)", "clip": "True",
                                     "steps": "(0.2, 0.3)", "offsets": "(0.2, 0.7)"}, [fm]
    n_anc = 4 * 5 * 5
    anc5 = mx.nd.contrib.MultiBoxPrior(mx.nd.array(fm), sizes=(0.3, 0.5, 0.1),
                                       ratios=(1, 2, 0.5)).asnumpy()
    logits = rng.normal(0, 2, (2, 4, n_anc)).astype(np.float32)
    prob = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    loc = rng.normal(0, 1, (2, n_anc * 4)).astype(np.float32)
    yield "_contrib_MultiBoxDetection", {}, [prob, loc, anc5]
    yield "_contrib_MultiBoxDetection", {"threshold": "0.3", "nms_threshold": "0.3",
                                         "nms_topk": "20", "clip": "False"}, [prob, loc, anc5]
    gt = np.full((2, 5, 5), -1, np.float32)
    gt[0, :3, 0] = [0, 2, 1]
    gt[0, :3, 1:] = unit_boxes(3)
    gt[1, :2, 0] = [1, 1]
    gt[1, :2, 1:] = unit_boxes(2)
    tgt = [anc5, gt, logits]
    yield "_contrib_MultiBoxTarget", {}, tgt
    yield "_contrib_MultiBoxTarget", {"overlap_threshold": "0.3", "negative_mining_ratio": "3",
                                      "negative_mining_thresh": "0.4", "ignore_label": "-2",
                                      "variances": "(0.1, 0.2, 0.3, 0.4)"}, tgt
    yield "_contrib_MultiBoxTarget", {"overlap_threshold": "0", "negative_mining_ratio": "2"}, tgt
    A, H, W = 6, 5, 7
    cls = rng.uniform(0, 1, (2, 2 * A, H, W)).astype(np.float32)
    bbox = rng.normal(0, 0.3, (2, 4 * A, H, W)).astype(np.float32)
    info = np.array([[70, 100, 1.0], [52, 81, 0.5]], np.float32)
    prop = {"scales": "(2, 4, 8)", "ratios": "(0.5, 2)", "feature_stride": "16",
            "rpn_pre_nms_top_n": "100", "rpn_post_nms_top_n": "30", "threshold": "0.6",
            "rpn_min_size": "8", "output_score": "True"}
    yield "_contrib_Proposal", prop, [cls[:1], bbox[:1], info[:1]]
    yield "_contrib_MultiProposal", prop, [cls, bbox, info]
    yield "_contrib_MultiProposal", {**prop, "iou_loss": "True", "rpn_pre_nms_top_n": "-1",
                                     "rpn_post_nms_top_n": "250"}, [cls, bbox * 20, info]
    yield "_contrib_MultiBoxDetection", {"force_suppress": "True", "variances": "(0.2, 0.2, 0.3, 0.3)",
                                         "threshold": "0.4"}, [prob, loc, anc5]


def resize_cases():
    """The contrib resize/pool/arange/SyncBatchNorm operators GluonCV's exports contain."""
    x = rng.normal(0, 1, (2, 3, 7, 6)).astype(np.float32)
    like = np.zeros((1, 1, 4, 9), np.float32)
    for mode, extra in (("size", {"height": "11", "width": "4"}),
                        ("size", {"scale_height": "1.5", "scale_width": "0.7"}),
                        ("odd_scale", {"scale_height": "2", "scale_width": "0.5"}),
                        ("to_even_down", {}), ("to_even_up", {}), ("to_odd_down", {}),
                        ("to_odd_up", {})):
        for align in ("True", "False"):
            yield "_contrib_BilinearResize2D", {"mode": mode, "align_corners": align, **extra}, [x]
    yield "_contrib_BilinearResize2D", {"mode": "like", "align_corners": "False"}, [x, like]
    for size in ("(1)", "(3, 2)", "(5, 4)", "(9, 11)"):
        yield "_contrib_AdaptiveAvgPooling2D", {"output_size": size}, [x]
    yield "_contrib_arange_like", {"start": "2", "step": "0.5"}, [x]
    yield "_contrib_arange_like", {"start": "1", "axis": "-1", "repeat": "2"}, [x]
    bn = [rng.normal(0, 1, (2, 3, 4, 4)).astype(np.float32)] + \
        [rng.uniform(0.5, 1.5, 3).astype(np.float32) for _ in range(4)]
    yield "_contrib_SyncBatchNorm", {"use_global_stats": "True", "eps": "1e-3", "key": "bn0",
                                     "fix_gamma": "False"}, bn


def deformable_cases():
    """DCN v1/v2 (offsets large enough to leave the image, so the border rules count)."""
    for n, c, hw, dg, g, dil, st, no_bias in ((2, 4, (6, 5), 2, 1, 1, 1, "False"),
                                              (1, 8, (7, 7), 1, 2, 2, 2, "True")):
        oh, ow = ((s + 2 * dil - 2 * dil - 1) // st + 1 for s in hw)
        x = rng.normal(0, 1, (n, c) + hw).astype(np.float32)
        off = rng.normal(0, 1.5, (n, dg * 18, oh, ow)).astype(np.float32)
        mask = rng.uniform(0, 1, (n, dg * 9, oh, ow)).astype(np.float32)
        wb = [rng.normal(0, 1, (6, c // g, 3, 3)).astype(np.float32)] + \
            ([] if no_bias == "True" else [rng.normal(0, 1, 6).astype(np.float32)])
        attrs = {"kernel": "(3, 3)", "stride": f"({st}, {st})", "dilate": f"({dil}, {dil})",
                 "pad": f"({dil}, {dil})", "num_filter": "6", "num_group": str(g),
                 "num_deformable_group": str(dg), "no_bias": no_bias}
        yield "_contrib_DeformableConvolution", attrs, [x, off] + wb
        yield "_contrib_ModulatedDeformableConvolution", attrs, [x, off, mask] + wb


def main() -> None:
    arrays, meta = {}, []
    for i, (op, attrs, ins) in enumerate(list(cases()) + list(resize_cases())
                                         + list(deformable_cases())):
        fn = getattr(mx.nd, op) if hasattr(mx.nd, op) else getattr(mx.nd.contrib, op[9:])
        outs = fn(*[mx.nd.array(a) for a in ins], **attrs)
        outs = outs if isinstance(outs, (list, tuple)) else [outs]
        for j, a in enumerate(ins):
            arrays[f"{i}:in{j}"] = a
        for j, o in enumerate(outs):
            arrays[f"{i}:out{j}"] = o.asnumpy()
        meta.append({"op": op, "attrs": attrs, "n_in": len(ins), "n_out": len(outs)})
    arrays["meta"] = np.array(json.dumps(meta))
    np.savez_compressed(OUT, **arrays)
    print(f"{len(meta)} cases → {OUT}")


if __name__ == "__main__":
    main()
