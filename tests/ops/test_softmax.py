"""softmax / log_softmax / softmin, masked_softmax, SoftmaxActivation, output ops."""
import numpy as np
import pytest

from nn_testutil import ATOL, RTOL, check_fixture, rand, run_op


def _softmax_ref(x, axis, t=1.0):
    z = x.astype(np.float64) / t
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.fixture
def x():
    return rand(np.random.default_rng(3), 2, 3, 4, 5) * 3


@pytest.mark.parametrize("axis", [-1, 0, 1, 2])
@pytest.mark.parametrize("temp", [None, 2.0, 0.5])
def test_softmax_family(x, axis, temp):
    attrs = {"axis": axis, "temperature": temp}
    t = 1.0 if temp is None else temp
    ref = _softmax_ref(x, axis, t)
    (y,) = run_op("softmax", attrs, x)
    np.testing.assert_allclose(y, ref, rtol=RTOL, atol=ATOL)
    (y,) = run_op("log_softmax", attrs, x)
    np.testing.assert_allclose(y, np.log(ref), rtol=RTOL, atol=ATOL)
    (y,) = run_op("softmin", attrs, x)
    np.testing.assert_allclose(y, _softmax_ref(-x, axis, t), rtol=RTOL, atol=ATOL)


def test_softmax_large_values_and_dtype():
    v = np.array([[1000.0, 1000.0], [-1000.0, 0.0]], np.float32)
    (y,) = run_op("softmax", {}, v)
    np.testing.assert_allclose(y, [[0.5, 0.5], [0.0, 1.0]], atol=1e-7)
    (y,) = run_op("softmax", {"dtype": "float64"}, v)
    assert y.dtype == np.float64
    (y,) = run_op("softmax", {}, v.astype(np.float16))
    assert y.dtype == np.float16


def test_softmax_length(x):
    rng = np.random.default_rng(4)
    length = rng.integers(1, 6, size=(2, 3, 4)).astype(np.int64)
    for op, log in (("softmax", False), ("log_softmax", True)):
        (y,) = run_op(op, {"use_length": True}, x, length)
        for idx in np.ndindex(2, 3, 4):
            n = length[idx]
            ref = _softmax_ref(x[idx][:n], 0)
            want = np.concatenate([np.log(ref) if log else ref, np.zeros(5 - n)])
            np.testing.assert_allclose(y[idx], want, rtol=RTOL, atol=ATOL)
    (y,) = run_op("softmax", {"use_length": "1", "axis": 1}, x,
                  np.full((2, 4, 5), 2.0, np.float32))
    np.testing.assert_allclose(y[:, 2:], 0)
    np.testing.assert_allclose(y[:, :2], _softmax_ref(x[:, :2], 1), rtol=RTOL, atol=ATOL)


def test_masked_softmax(x):
    rng = np.random.default_rng(5)
    mask = rng.random((2, 3, 1, 5)) > 0.3
    mask[..., 0] = True
    (y,) = run_op("masked_softmax", {"axis": -1}, x, mask)
    xm = np.where(mask, x, -np.inf)
    ref = _softmax_ref(xm, -1)
    np.testing.assert_allclose(y, np.where(mask, ref, 0), rtol=RTOL, atol=ATOL)
    (y,) = run_op("masked_log_softmax", {"axis": -1, "temperature": 2.0}, x, mask)
    with np.errstate(divide="ignore"):
        ref = np.log(_softmax_ref(xm, -1, 2.0))
    np.testing.assert_allclose(np.where(mask, y, 0), np.where(mask, ref, 0), rtol=RTOL,
                               atol=ATOL)
    assert np.all(np.isneginf(y[~np.broadcast_to(mask, y.shape)]))


def test_softmax_activation(x):
    (y,) = run_op("SoftmaxActivation", {}, x)
    ref = _softmax_ref(x.reshape(2, -1), 1).reshape(x.shape)
    np.testing.assert_allclose(y, ref, rtol=RTOL, atol=ATOL)
    (y,) = run_op("SoftmaxActivation", {"mode": "channel"}, x)
    np.testing.assert_allclose(y, _softmax_ref(x, 1), rtol=RTOL, atol=ATOL)


def test_output_ops(x):
    label = np.zeros(2, np.float32)
    (y,) = run_op("SoftmaxOutput", {}, x, label)
    np.testing.assert_allclose(y, _softmax_ref(x.reshape(2, -1), 1).reshape(x.shape),
                               rtol=RTOL, atol=ATOL)
    (y,) = run_op("SoftmaxOutput", {"multi_output": "True"}, x, np.zeros((2, 4, 5), np.float32))
    np.testing.assert_allclose(y, _softmax_ref(x, 1), rtol=RTOL, atol=ATOL)
    (y,) = run_op("SoftmaxOutput", {"preserve_shape": "1"}, x, np.zeros((2, 3, 4), np.float32))
    np.testing.assert_allclose(y, _softmax_ref(x, -1), rtol=RTOL, atol=ATOL)
    (y,) = run_op("LinearRegressionOutput", {}, x, x)
    np.testing.assert_array_equal(y, x)
    (y,) = run_op("MAERegressionOutput", {}, x, x)
    np.testing.assert_array_equal(y, x)
    (y,) = run_op("LogisticRegressionOutput", {}, x, x)
    np.testing.assert_allclose(y, 1 / (1 + np.exp(-x.astype(np.float64))), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("version,name", [("mxnet-1.9.1", "clip_softmax"),
                                          ("mxnet-1.9.1", "softmax_output")])
def test_fixture(version, name):
    check_fixture(version, name)
