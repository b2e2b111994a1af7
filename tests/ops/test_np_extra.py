"""np.hanning/hamming/blackman, bincount, interp, fill_diagonal, diag_indices_from and
npx.constraint_check against NumPy, imperative and hybridized."""
import numpy as onp
import pytest

import framework as mx
from framework import np
from framework.gluon import HybridBlock


class _Fn(HybridBlock):
    def __init__(self, fn):
        super().__init__()
        self._fn = fn

    def forward(self, *xs):
        return self._fn(*xs)


def _both(fn, *xs):
    net = _Fn(fn)
    imperative = net(*xs)
    net.hybridize()
    return imperative, net(*xs)


@pytest.mark.parametrize("name", ["hanning", "hamming", "blackman"])
@pytest.mark.parametrize("m", [-2, 0, 1, 7])
def test_windows(name, m):
    for got in _both(lambda x: x + getattr(np, name)(m), np.zeros(())):
        onp.testing.assert_allclose(got.asnumpy(), getattr(onp, name)(m), rtol=1e-6, atol=1e-7)
        assert got.dtype == onp.float32


def test_bincount_counts_and_weights():
    data = onp.array([0, 3, 3, 1, 3], onp.int32)
    w = onp.array([0.5, 1, 2, 3, 4], onp.float32)
    for got in _both(lambda d: np.bincount(d, minlength=6), np.array(data, dtype="int32")):
        assert got.asnumpy().tolist() == onp.bincount(data, minlength=6).tolist()
    for got in _both(lambda d, ww: np.bincount(d, ww), np.array(data, dtype="int32"),
                     np.array(w, dtype="float32")):
        onp.testing.assert_allclose(got.asnumpy(), onp.bincount(data, w))
        assert got.dtype == onp.float32
    with pytest.raises(ValueError):
        np.bincount(np.array([1, -1], dtype="int32"))


def test_interp_arrays_scalars_and_period():
    xp, fp = onp.array([0.0, 1.0, 3.0]), onp.array([1.0, 3.0, -1.0])
    x = onp.array([-1.0, 0.5, 2.0, 5.0])
    got = np.interp(np.array(x), np.array(xp), np.array(fp), left=-9, right=9)
    onp.testing.assert_allclose(got.asnumpy(), onp.interp(x, xp, fp, -9, 9))
    assert got.dtype == onp.float64
    assert float(np.interp(2.0, np.array(xp), np.array(fp))) == pytest.approx(1.0)
    onp.testing.assert_allclose(np.interp(np.array(x), np.array(xp), np.array(fp), period=4).asnumpy(),
                                onp.interp(x, xp, fp, period=4))


@pytest.mark.parametrize("shape,val,wrap", [((5, 3), 7, False), ((7, 3), [1, 2], True),
                                            ((4, 4, 4), 2, False)])
def test_fill_diagonal_in_place(shape, val, wrap):
    a = np.zeros(shape)
    ref = onp.zeros(shape, onp.float32)
    assert np.fill_diagonal(a, val, wrap) is None
    onp.fill_diagonal(ref, val, wrap)
    assert (a.asnumpy() == ref).all()


def test_diag_indices_from():
    got = np.diag_indices_from(np.ones((3, 3, 3)))
    for g, w in zip(got, onp.diag_indices_from(onp.ones((3, 3, 3)))):
        assert g.asnumpy().tolist() == w.tolist() and g.dtype == onp.int64
    with pytest.raises(ValueError):
        np.diag_indices_from(np.ones((3, 4)))


def test_constraint_check():
    ok, bad = np.ones((3,), dtype="bool"), np.array([True, False, True], dtype="bool")
    for got in _both(lambda x, b: x * mx.npx.constraint_check(b, "x must be > 0"),
                     np.ones((3,)), ok):
        assert got.asnumpy().tolist() == [1, 1, 1]
    net = _Fn(lambda b: mx.npx.constraint_check(b, "x must be > 0"))
    net.hybridize()
    with pytest.raises(ValueError, match="x must be > 0"):
        net(bad)


def test_matrix_rank_and_pinv_with_array_cutoffs_trace():
    rs = onp.random.RandomState(0)
    m = rs.rand(2, 4, 3).astype("float32")
    m[1, :, 2] = m[1, :, 0]                                  # second matrix has rank 2
    tol = onp.array([1e-3, 10.0], onp.float32)
    for got in _both(lambda x, t: np.linalg.matrix_rank(x, t), np.array(m), np.array(tol)):
        assert got.asnumpy().tolist() == onp.linalg.matrix_rank(m, tol).tolist()
        assert got.dtype == onp.int64
    assert np.linalg.matrix_rank(np.array(m)).asnumpy().tolist() == [3, 2]
    rc = onp.array([1e-6, 0.5], onp.float32)
    for got in _both(lambda x, r: np.linalg.pinv(x, r), np.array(m), np.array(rc)):
        onp.testing.assert_allclose(got.asnumpy(), onp.linalg.pinv(m, rc), rtol=1e-4, atol=1e-5)
