"""The standalone INT8 operators on hand-checked values (MXNet 1.9.1's oneDNN arithmetic:
127.5 / 255.5 levels per max|range|, ties to even, saturation), and their refusals."""
from __future__ import annotations

import numpy as np
import pytest

from framework.base import OperatorError
from framework.ops.registry import get_op


def run(name, attrs, *ins):
    op = get_op(name)
    a = op.parse_attrs(attrs)
    outs = op.kernel(a, *ins)
    outs = outs if isinstance(outs, tuple) else (outs,)
    assert [o.shape for o in outs] == op.shapes(a, [x.shape for x in ins])
    assert [o.dtype for o in outs] == op.dtypes(a, [x.dtype for x in ins])
    return outs


def rng(lo, hi):
    return np.array([lo], np.float32), np.array([hi], np.float32)


def test_quantize_v2_int8_calibrated():
    x = np.array([-1.0, -0.5, 0.2, 1.0, 3.0], np.float32)
    q, lo, hi = run("_contrib_quantize_v2", {"min_calib_range": "-0.5", "max_calib_range": "1.0",
                                             "out_type": "auto"}, x)
    # 127.5 levels per 1.0; -127.5 → -128 (ties to even), 1.0 → 127.5 → 128 → saturates to 127
    assert q.dtype == np.int8 and q.tolist() == [-128, -64, 26, 127, 127]
    assert (lo[0], hi[0]) == (-1.0, 1.0)


def test_quantize_v2_auto_is_uint8_for_a_non_negative_range():
    x = np.array([0.0, 0.5, 2.0], np.float32)
    q, lo, hi = run("_contrib_quantize_v2", {"min_calib_range": "0", "max_calib_range": "2",
                                             "out_type": "auto"}, x)
    assert q.dtype == np.uint8 and q.tolist() == [0, 64, 255]   # 0.5·127.75 = 63.875
    assert (lo[0], hi[0]) == (0.0, 2.0)


def test_quantize_v2_without_calibration_uses_the_data_range():
    x = np.array([-2.0, 1.0], np.float32)
    q, lo, hi = run("_contrib_quantize_v2", {}, x)
    assert q.tolist() == [-128, 64] and (lo[0], hi[0]) == (-2.0, 2.0)


def test_quantize_v2_passes_int8_through():
    x = np.array([-3, 7], np.int8)
    q, lo, hi = run("_contrib_quantize_v2", {"min_calib_range": "-1", "max_calib_range": "1"}, x)
    assert q is x and (lo[0], hi[0]) == (-1.0, 1.0)


def test_dequantize_int8_and_uint8():
    (y,) = run("_contrib_dequantize", {}, np.array([-128, 51], np.int8), *rng(-2.55, 1.0))
    np.testing.assert_allclose(y, [-128 * 2.55 / 127.5, 51 * 2.55 / 127.5], rtol=1e-6)
    (y,) = run("_contrib_dequantize", {}, np.array([255], np.uint8), *rng(0, 5.11))
    np.testing.assert_allclose(y, [255 * 5.11 / 255.5], rtol=1e-6)


def test_requantize_to_the_calibrated_range():
    x = np.array([2**30, -(2**29), 0], np.int32)
    q, lo, hi = run("_contrib_requantize", {"min_calib_range": "-1", "max_calib_range": "2"},
                    x, *rng(-4.0, 4.0))
    # level value 4/(2^31-1); x·that/2·127 levels
    expect = np.rint(x.astype(np.float64) * 4 / 2147483647 / 2 * 127)
    assert q.dtype == np.int8 and q.tolist() == expect.tolist()
    assert (lo[0], hi[0]) == (-2.0, 2.0)


def test_requantize_refuses_non_int32():
    with pytest.raises(OperatorError, match="int32"):
        run("_contrib_requantize", {}, np.zeros(3, np.int8), *rng(-1, 1))


def test_quantized_pooling_keeps_levels_and_range():
    x = np.arange(16, dtype=np.uint8).reshape(1, 1, 4, 4)
    y, lo, hi = run("_contrib_quantized_pooling", {"kernel": "(2, 2)", "stride": "(2, 2)",
                                                   "pool_type": "avg"}, x, *rng(0, 3))
    assert y.dtype == np.uint8 and y.ravel().tolist() == [2, 4, 10, 12]   # 2.5 → 2, 4.5 → 4
    assert hi[0] == 3.0
    with pytest.raises(OperatorError, match="int8 or uint8"):
        run("_contrib_quantized_pooling", {"kernel": "(2, 2)"}, x.astype(np.float32), *rng(0, 3))


def test_quantized_concat_rescales_onto_the_widest_range():
    a, b = np.array([[100]], np.int8), np.array([[200]], np.uint8)
    y, lo, hi = run("_contrib_quantized_concat", {"num_args": "2", "dim": "1"},
                    a, b, *rng(-1, 1), *rng(0, 2))
    # int8 out over ±2: a (1.0/127.5 per level) halves, b's 200/255.5·2 → 200·(127.5/2)/(255.5/2)
    assert y.dtype == np.int8 and y.tolist() == [[50, int(np.rint(200 * 127.5 / 255.5))]]
    assert (lo[0], hi[0]) == (-1.0, 2.0)


def test_quantized_elemwise_add_without_calibration_is_int32():
    x, y = np.array([127], np.int8), np.array([-127], np.int8)
    s, lo, hi = run("_contrib_quantized_elemwise_add", {}, x, y, *rng(-1, 1), *rng(-3, 3))
    assert s.dtype == np.int32 and (lo[0], hi[0]) == (-4.0, 4.0)
    real = s[0] * 4.0 / 2147483647
    np.testing.assert_allclose(real, 127 / 127.5 * 1 - 127 / 127.5 * 3, rtol=1e-5)


def test_unfused_quantized_conv_adds_the_int8_bias_raw():
    x = np.full((1, 1, 3, 3), 2, np.uint8)
    w = np.ones((1, 1, 3, 3), np.int8)
    b = np.array([5], np.int8)
    y, lo, hi = run("_contrib_quantized_conv", {"kernel": "(3, 3)", "num_filter": "1"},
                    x, w, b, *rng(0, 1), *rng(-1, 1), *rng(-1, 1))
    assert y.dtype == np.int32 and y.ravel().tolist() == [9 * 2 + 5]
    top = (1 / 127) * (1 / 127) * 2147483647           # int8 × int8 levels of int32's top
    np.testing.assert_allclose([lo[0], hi[0]], [-top, top], rtol=1e-6)


def test_unfused_quantized_fc_rescales_the_bias():
    x = np.array([[10, 20]], np.int8)
    w = np.array([[1, 2]], np.int8)
    b = np.array([64], np.int8)
    y, _, _ = run("_contrib_quantized_fully_connected", {"num_hidden": "1"},
                  x, w, b, *rng(-1, 1), *rng(-1, 1), *rng(-2, 2))
    # bias 64 levels of 2/127.5 → product levels (127.5 · 127.5 per unit): 64·2·127.5 → trunc
    assert y.tolist() == [[10 + 40 + int(64 * 2 * 127.5)]]
