"""Deformable convolutions, position-sensitive and rotated roi pooling: properties that follow
from their definitions (MXNet's own outputs are checked in test_contrib_refs.py), and the errors
bad inputs raise."""
from __future__ import annotations

import numpy as np
import pytest

from framework.base import OperatorError, ShapeError
from framework.ops.registry import get_op

rng = np.random.default_rng(3)


def run(name, attrs, *ins):
    op = get_op(name)
    return op.kernel(op.parse_attrs(attrs), *ins)


@pytest.mark.parametrize("masked", [False, True])
def test_zero_offsets_unit_mask_is_a_convolution(masked):
    x = rng.normal(size=(2, 4, 7, 6)).astype(np.float32)
    w = rng.normal(size=(6, 2, 3, 3)).astype(np.float32)
    b = rng.normal(size=6).astype(np.float32)
    attrs = {"kernel": "(3, 3)", "pad": "(1, 1)", "stride": "(2, 1)", "num_filter": "6",
             "num_group": "2"}
    ref = run("Convolution", attrs, x, w, b)
    off = np.zeros((2, 18, 4, 6), np.float32)
    extra = [np.ones((2, 9, 4, 6), np.float32)] if masked else []
    name = "_npx_modulated_deformable_convolution" if masked else "_npx_deformable_convolution"
    np.testing.assert_allclose(run(name, attrs, x, off, *extra, w, b), ref, rtol=1e-5, atol=1e-5)


def test_integer_offset_shifts_the_tap():
    """A 1x1 kernel whose offset is (+1, -2) everywhere reads x[y + 1, x - 2] (0 outside)."""
    x = rng.normal(size=(1, 1, 5, 6)).astype(np.float32)
    off = np.zeros((1, 2, 5, 6), np.float32)
    off[:, 0], off[:, 1] = 1, -2
    w = np.ones((1, 1, 1, 1), np.float32)
    out = run("_contrib_DeformableConvolution",
              {"kernel": "(1, 1)", "num_filter": "1", "no_bias": "True"}, x, off, w)
    ref = np.zeros_like(x)
    ref[0, 0, :4, 2:] = x[0, 0, 1:, :4]
    np.testing.assert_array_equal(out, ref)


def test_deformable_convolution_rejects_a_wrong_offset_shape():
    x = np.zeros((1, 4, 6, 6), np.float32)
    with pytest.raises(ShapeError, match="offset must be"):
        run("_contrib_DeformableConvolution", {"kernel": "(3, 3)", "num_filter": "2"},
            x, np.zeros((1, 9, 4, 4), np.float32), np.zeros((2, 4, 3, 3), np.float32),
            np.zeros(2, np.float32))
    with pytest.raises(ShapeError, match="only 2-D"):
        get_op("_contrib_DeformableConvolution").shapes(
            get_op("_contrib_DeformableConvolution").parse_attrs(
                {"kernel": "(3,)", "num_filter": "2"}), [(1, 4, 6), (1, 6, 4)])


def test_psroi_pooling_of_a_constant_map_per_channel():
    """Each output (d, ph, pw) reads channel (d·g + ph)·g + pw: a map holding its channel index
    gives exactly that index wherever the bin is not empty."""
    g, d = 3, 2
    x = np.broadcast_to(np.arange(d * g * g, dtype=np.float32)[None, :, None, None],
                        (1, d * g * g, 8, 8)).copy()
    rois = np.array([[0, 0, 0, 31, 31], [0, 8, 4, 20, 30]], np.float32)
    out = run("_contrib_PSROIPooling", {"spatial_scale": "0.25", "output_dim": str(d),
                                        "pooled_size": str(g)}, x, rois)
    ref = (np.arange(d)[:, None, None] * g + np.arange(g)[:, None]) * g + np.arange(g)
    np.testing.assert_array_equal(out, np.broadcast_to(ref, out.shape))


def test_psroi_pooling_errors_name_the_op():
    x = np.zeros((1, 8, 4, 4), np.float32)
    with pytest.raises(ShapeError, match="PSROIPooling: output_dim 1 x group 3"):
        run("_contrib_PSROIPooling", {"spatial_scale": "1", "output_dim": "1",
                                      "pooled_size": "3"}, x, np.zeros((1, 5), np.float32))
    with pytest.raises(OperatorError, match="batch indices"):
        run("_contrib_PSROIPooling", {"spatial_scale": "1", "output_dim": "2",
                                      "pooled_size": "2"},
            x, np.array([[1, 0, 0, 2, 2]], np.float32))


def test_deformable_psroi_without_shift_counts_its_samples():
    x = np.ones((1, 9, 6, 6), np.float32)
    rois = np.array([[0, 0, 0, 23, 23], [0, 20, 20, 40, 40]], np.float32)
    op = get_op("_contrib_DeformablePSROIPooling")
    a = op.parse_attrs({"spatial_scale": "0.25", "output_dim": "1", "group_size": "3",
                        "pooled_size": "3", "sample_per_part": "2", "no_trans": "True"})
    out, count = op.kernel(a, x, rois)
    assert op.n_visible(a) == 1 and op.input_names(a) == ["data", "rois"]
    np.testing.assert_array_equal(count[0], 4)          # inside the map: all 2x2 samples
    assert (count[1] < 4).any()                         # reaching past it: some skipped
    np.testing.assert_array_equal(out[count > 0], 1)


def test_deformable_psroi_checks_trans():
    op = get_op("_contrib_DeformablePSROIPooling")
    a = op.parse_attrs({"spatial_scale": "1", "output_dim": "2", "group_size": "2",
                        "pooled_size": "2"})
    with pytest.raises(ShapeError, match="trans must be"):
        op.shapes(a, [(1, 8, 4, 4), (3, 5), (3, 2, 3, 3)])


def test_rroi_align_at_zero_angle_is_axis_aligned_roi_align():
    """A rotated roi at 0° samples the same grid as ROIAlign over the box it spans."""
    x = rng.normal(size=(1, 3, 12, 12)).astype(np.float32)
    box = np.array([[0, 8, 12, 32, 28]], np.float32)             # x1 y1 x2 y2
    ref = run("_contrib_ROIAlign", {"pooled_size": "(3, 4)", "spatial_scale": "0.25",
                                    "sample_ratio": "2"}, x, box)
    rroi = np.array([[0, 20, 20, 24, 16, 0]], np.float32)        # cx cy w h angle
    out = run("_contrib_RROIAlign", {"pooled_size": "(3, 4)", "spatial_scale": "0.25",
                                     "sampling_ratio": "2"}, x, rroi)
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-6)


def test_rroi_align_rejects_bad_rois():
    x = np.zeros((1, 2, 4, 4), np.float32)
    with pytest.raises(ShapeError, match=r"rois must be \(num_rois, 6\)"):
        run("_contrib_RROIAlign", {"pooled_size": "(2, 2)", "spatial_scale": "1"},
            x, np.zeros((1, 5), np.float32))
    with pytest.raises(OperatorError, match="batch indices"):
        run("_contrib_RROIAlign", {"pooled_size": "(2, 2)", "spatial_scale": "1"},
            x, np.array([[2, 1, 1, 2, 2, 0]], np.float32))


def test_deformable_convolution_is_written_with_each_mxnet_versions_name():
    """MXNet 2 renamed the deformable convolutions (`_npx_…`) and cannot load the 1.x names, so a
    2.x file gets the 2.x name; the 1.x form keeps the 1.x name."""
    import json

    from framework.symbol.json_io import load_json, to_json
    from framework.symbol.legacy_export import to_legacy

    graph = {"nodes": [{"op": "null", "name": n, "inputs": []}
                       for n in ("data", "offset", "mask", "w")]
             + [{"op": "_contrib_ModulatedDeformableConvolution", "name": "dcn0",
                 "attrs": {"kernel": "(1, 1)", "num_filter": "2", "no_bias": "True"},
                 "inputs": [[0, 0, 0], [1, 0, 0], [2, 0, 0], [3, 0, 0]]}],
             "arg_nodes": [0, 1, 2, 3], "heads": [[4, 0, 0]],
             "attrs": {"mxnet_version": ["int", 10901]}}
    sym = load_json(json.dumps(graph))
    ops2 = [n["op"] for n in json.loads(to_json(sym))["nodes"]]
    assert ops2[-1] == "_npx_modulated_deformable_convolution"
    assert load_json(to_json(sym)).tojson() == to_json(sym)          # and reads back
    shapes = {"data": (1, 2, 3, 3), "offset": (1, 2, 3, 3), "mask": (1, 1, 3, 3),
              "w": (2, 2, 1, 1)}
    ops1 = [n["op"] for n in json.loads(to_json(to_legacy(sym, shapes), version=10901))["nodes"]]
    assert ops1[-1] == "_contrib_ModulatedDeformableConvolution"
