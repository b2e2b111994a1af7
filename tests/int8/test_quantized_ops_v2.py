"""MXNet 2.0's INT8 operators (oneDNN semantics) and the `npx` names its quantized ops answer to."""
from __future__ import annotations

import numpy as np
import pytest

import framework as mx
from framework import npx
from framework.base import MXNetError

INT32_MAX = 2147483647.0


def _r(v) -> mx.np.ndarray:
    return mx.np.array([v], dtype="float32")


def test_npx_names_reach_the_existing_entries():
    from framework.ops.registry import get_op
    for npx_name, entry in [("_npx_quantized_pooling", "_contrib_quantized_pooling"),
                            ("_npx_quantized_fully_connected", "_contrib_quantized_fully_connected"),
                            ("_npx_contrib_quantize_v2", "_contrib_quantize_v2"),
                            ("_npx_requantize", "_contrib_requantize")]:
        assert get_op(npx_name) is get_op(entry)
    q, lo, hi = npx.quantized_flatten(mx.np.zeros((2, 3, 4), dtype="int8"), _r(-1), _r(1))
    assert q.shape == (2, 12) and q.dtype == np.int8 and float(hi[0]) == 1.0


def test_npi_add_mixed_types_halves_the_uint8_operand():
    # equal shapes, uint8 + int8: oneDNN first reorders the uint8 operand to int8 at scale 0.5
    x = mx.np.array([255, 3], dtype="uint8")
    y = mx.np.array([0, 0], dtype="int8")
    q, lo, hi = npx.quantized_npi_add(x, y, _r(0), _r(255), _r(-127), _r(127))
    assert q.dtype == np.int32 and float(hi[0]) == 382.0 and float(lo[0]) == -382.0
    np.testing.assert_allclose(q.asnumpy() * 382.0 / INT32_MAX, [254.0, 4.0], atol=1e-4)


def test_npi_add_broadcasts():
    x = mx.np.array([[1, 2, 3], [4, 5, 6]], dtype="int8")
    y = mx.np.array([[10]], dtype="int8")
    q, _, hi = npx.quantized_npi_add(x, y, _r(-127), _r(127), _r(-127), _r(127))
    assert q.shape == (2, 3)
    np.testing.assert_allclose(q.asnumpy() * float(hi[0]) / INT32_MAX,
                               [[11, 12, 13], [14, 15, 16]], atol=1e-4)
    with pytest.raises(MXNetError):
        npx.quantized_npi_add(x, mx.np.zeros((3, 2), dtype="int8"), _r(-1), _r(1), _r(-1), _r(1))


def test_elemwise_mul_int32_calibrated_and_float():
    x = mx.np.array([10, -3], dtype="int8")
    y = mx.np.array([5, 7], dtype="int8")
    r = (_r(-127), _r(127), _r(-127), _r(127))
    q, lo, hi = npx.quantized_elemwise_mul(x, y, *r)
    assert q.dtype == np.int32 and q.asnumpy().tolist() == [50, -21]
    assert float(hi[0]) == pytest.approx(INT32_MAX)
    q8, lo8, hi8 = npx.quantized_elemwise_mul(x, y, *r, min_calib_range=-100.0,
                                              max_calib_range=100.0)
    assert q8.dtype == np.int8 and q8.asnumpy().tolist() == [63, -26]   # truncated, as MXNet
    f = npx.quantized_elemwise_mul(x, y, *r, enable_float_output=True)
    assert f.dtype == np.float32 and f.asnumpy().tolist() == [50.0, -21.0]
    with pytest.raises(MXNetError, match="int8"):
        npx.quantized_elemwise_mul(x.astype("uint8"), y, *r)


def test_layout_ops_keep_levels_and_range():
    x = mx.np.arange(6).astype("int8").reshape(2, 3)
    q, lo, hi = npx.quantized_transpose(x, _r(-3), _r(5), axes=(1, 0))
    assert q.asnumpy().tolist() == [[0, 3], [1, 4], [2, 5]] and float(lo[0]) == -3.0
    q, _, _ = npx.quantized_reshape(mx.np.zeros(64, dtype="uint8"), _r(0), _r(1),
                                    newshape=(-6, 16, 4))
    assert q.shape == (16, 4) and q.dtype == np.uint8
    w = mx.np.array([[1, -2], [3, 4], [-5, 6]], dtype="int8")
    e, lo, hi = npx.quantized_embedding(data=mx.np.array([2.0, 0.0]), weight=w, min_weight=_r(-6),
                                        max_weight=_r(6), input_dim=3, output_dim=2)
    assert e.asnumpy().tolist() == [[-5, 6], [1, -2]] and float(hi[0]) == 6.0


def test_quantize_asym_maps_the_range_onto_uint8():
    x = mx.np.array([-1.0, 0.0, 1.0])
    q, scale, shift = npx._contrib_quantize_asym(x, min_calib_range=-1.0, max_calib_range=1.0)
    assert q.dtype == np.uint8 and q.asnumpy().tolist() == [0, 128, 255]
    assert float(scale[0]) == 127.5 and float(shift[0]) == 127.5


@pytest.mark.parametrize("bidirectional", [False, True])
def test_quantized_lstm_tracks_the_float_lstm(bidirectional):
    rng = np.random.default_rng(0)
    T, N, I, H, D = 5, 2, 8, 8, 2 if bidirectional else 1
    size = (I + H + 2) * 4 * H * D
    data = rng.uniform(-1, 1, (T, N, I)).astype(np.float32)
    state = rng.uniform(-1, 1, (D, N, H)).astype(np.float32)
    cell = rng.uniform(0, 1, (D, N, H)).astype(np.float32)
    params = rng.normal(0, 1, size).astype(np.float32)
    kw = dict(mode="lstm", state_size=H, num_layers=1, bidirectional=bidirectional)
    ref = npx.rnn(data=mx.np.array(data), parameters=mx.np.array(params),
                  state=mx.np.array(state), state_cell=mx.np.array(cell), **kw).asnumpy()
    scale = np.float32(128.0 / (data.max() - data.min()))
    shift = np.float32(128.0 - data.max() * scale)
    qdata = (data * scale + shift + 0.5).astype(np.uint8)
    out = npx.contrib_quantized_rnn(data=mx.np.array(qdata, dtype="uint8"), parameters=mx.np.array(params),
                                    state=mx.np.array(state), state_cell=mx.np.array(cell),
                                    data_scale=_r(scale), data_shift=_r(shift), **kw).asnumpy()
    assert out.shape == ref.shape
    mse = float(np.mean((out - ref) ** 2))
    assert 0 < mse < 1e-3          # quantized (not the float result), but close to it
    with pytest.raises(MXNetError, match="uint8"):
        npx.contrib_quantized_rnn(data=mx.np.array(data), parameters=mx.np.array(params),
                                  state=mx.np.array(state), state_cell=mx.np.array(cell),
                                  data_scale=_r(scale), data_shift=_r(shift), **kw)
