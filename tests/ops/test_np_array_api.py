"""np functions MXNet 2 has beyond the core: creation (logspace, tri, tril_indices, indices),
statistics (percentile, quantile, median), unique and its Array-API forms, flatnonzero,
apply_along_axis, linalg (svdvals, matrix_transpose, eig, eigvals, lstsq, eigh upper=) and the
dtype groups. Values follow NumPy; dtypes follow MXNet 2.0.0b1 (float32 creation defaults,
int64 indices, float32 percentiles of integers)."""
from __future__ import annotations

import numpy as onp
import pytest

import framework as mx
from framework import np
from framework.gluon import HybridBlock


class _Wrap(HybridBlock):
    def __init__(self, fn):
        super().__init__()
        self._fn = fn

    def forward(self, x):
        return self._fn(x)


def _both(fn, x):
    """The function imperatively and inside a hybridized block (so it must trace)."""
    imp = fn(x)
    blk = _Wrap(fn)
    blk.hybridize()
    return imp, blk(x)


def test_creation_functions_match_numpy_with_mxnet_dtypes():
    onp.testing.assert_allclose(np.logspace(0, 2, 5, base=3.0).asnumpy(),
                                onp.logspace(0, 2, 5, base=3.0), rtol=1e-6)
    assert np.logspace(0, 1, 3).dtype == onp.float32
    onp.testing.assert_array_equal(np.tri(3, 4, k=1).asnumpy(), onp.tri(3, 4, k=1))
    assert np.tri(3).dtype == onp.float32
    r, c = np.tril_indices(4, k=-1, m=5)
    want = onp.tril_indices(4, k=-1, m=5)
    onp.testing.assert_array_equal(r.asnumpy(), want[0])
    onp.testing.assert_array_equal(c.asnumpy(), want[1])
    assert r.dtype == onp.int64
    onp.testing.assert_array_equal(np.indices((2, 3)).asnumpy(), onp.indices((2, 3)))
    assert np.indices((2, 3)).dtype == onp.int64
    assert np.indices((2, 3), dtype="float32").dtype == onp.float32


def test_creation_functions_trace():
    x = np.zeros(())
    imp, hyb = _both(lambda z: z + np.tri(3, 2, 0), x)
    onp.testing.assert_array_equal(imp.asnumpy(), hyb.asnumpy())
    imp, hyb = _both(lambda z: z + np.logspace(1, 2, 4), x)
    onp.testing.assert_allclose(imp.asnumpy(), hyb.asnumpy())


@pytest.mark.parametrize("axis,keepdims", [(None, False), (0, False), ((0, 2), True), (-1, True)])
def test_percentile_quantile_median(axis, keepdims):
    a = onp.random.uniform(-1, 1, (4, 5, 3)).astype(onp.float32)
    for method in ("linear", "lower", "higher", "midpoint", "nearest"):
        got = np.percentile(np.array(a), 30, axis=axis, interpolation=method, keepdims=keepdims)
        want = onp.percentile(a, 30, axis=axis, method=method, keepdims=keepdims)
        onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5, atol=1e-6)
    q = onp.array([0.1, 0.9])
    onp.testing.assert_allclose(np.quantile(np.array(a), np.array(q), axis=axis).asnumpy(),
                                onp.quantile(a, q, axis=axis), rtol=1e-5, atol=1e-6)
    imp, hyb = _both(lambda z: np.median(z, axis=axis, keepdims=keepdims), np.array(a))
    want = onp.median(a, axis=axis, keepdims=keepdims)
    onp.testing.assert_allclose(imp.asnumpy(), want, rtol=1e-5, atol=1e-7)
    onp.testing.assert_allclose(hyb.asnumpy(), want, rtol=1e-5, atol=1e-7)


def test_percentile_of_integers_is_float32_and_q_checked():
    assert np.median(np.array([1, 2, 3, 4], dtype="int32")).dtype == onp.float32
    with pytest.raises(mx.MXNetError, match=r"\[0, 100\]"):
        np.percentile(np.array([1.0, 2.0]), 101)


def test_unique_forms():
    x = onp.array([[3.0, 1.0], [1.0, 7.0], [3.0, 3.0]], onp.float32)
    vals, idx, inv, cnt = np.unique(np.array(x), True, True, True)
    want = onp.unique(x, True, True, True)
    for got, w in zip((vals, idx, inv, cnt), want):
        assert got.shape == w.shape
        onp.testing.assert_array_equal(got.asnumpy(), w)
    res = np.unique_all(np.array(x))
    onp.testing.assert_array_equal(res.counts.asnumpy(), want[3])
    onp.testing.assert_array_equal(res.inverse_indices.asnumpy(), want[2])
    onp.testing.assert_array_equal(np.unique_counts(np.array(x)).counts.asnumpy(), want[3])
    onp.testing.assert_array_equal(np.unique_inverse(np.array(x)).values.asnumpy(), want[0])
    onp.testing.assert_array_equal(np.unique_values(np.array(x)).asnumpy(), want[0])
    rows = np.unique(np.array(x), axis=0)
    onp.testing.assert_array_equal(rows.asnumpy(), onp.unique(x, axis=0))
    imp, hyb = _both(np.unique, np.array(x))
    onp.testing.assert_array_equal(imp.asnumpy(), hyb.asnumpy())


def test_flatnonzero_and_apply_along_axis():
    x = onp.array([[0, 2, 0], [1, 0, 5]], onp.float32)
    imp, hyb = _both(np.flatnonzero, np.array(x))
    onp.testing.assert_array_equal(imp.asnumpy(), onp.flatnonzero(x))
    onp.testing.assert_array_equal(hyb.asnumpy(), onp.flatnonzero(x))
    assert imp.dtype == onp.int64
    got = np.apply_along_axis(lambda v: v.max() - v.min(), 1, np.array(x))
    onp.testing.assert_array_equal(got.asnumpy(), onp.ptp(x, axis=1))


def test_linalg_additions():
    a = onp.random.uniform(-1, 1, (2, 4, 3)).astype(onp.float32)
    onp.testing.assert_allclose(np.linalg.svdvals(np.array(a)).asnumpy(),
                                onp.linalg.svd(a, compute_uv=False), rtol=1e-5, atol=1e-6)
    onp.testing.assert_array_equal(np.linalg.matrix_transpose(np.array(a)).asnumpy(),
                                   onp.swapaxes(a, -1, -2))
    onp.testing.assert_array_equal(np.array(a).mT.asnumpy(), onp.swapaxes(a, -1, -2))
    with pytest.raises(ValueError):
        np.linalg.matrix_transpose(np.zeros((3,)))
    q, _ = onp.linalg.qr(onp.random.rand(3, 3))
    m = (q @ onp.diag([1.0, -2.0, 3.0]) @ q.T).astype(onp.float32)
    w, v = np.linalg.eig(np.array(m))
    onp.testing.assert_allclose(onp.sort(w.asnumpy()), [-2.0, 1.0, 3.0], rtol=1e-4, atol=1e-5)
    onp.testing.assert_allclose(m @ v.asnumpy(), v.asnumpy() * w.asnumpy(), rtol=1e-4, atol=1e-4)
    onp.testing.assert_allclose(onp.sort(np.linalg.eigvals(np.array(m)).asnumpy()),
                                [-2.0, 1.0, 3.0], rtol=1e-4, atol=1e-5)
    with pytest.raises(mx.MXNetError, match="complex"):
        np.linalg.eigvals(np.array([[0.0, -1.0], [1.0, 0.0]]))
    A = onp.random.rand(5, 3)
    B = onp.random.rand(5, 2)
    got = np.linalg.lstsq(np.array(A, dtype="float64"), np.array(B, dtype="float64"), rcond=None)
    for g, w_ in zip(got, onp.linalg.lstsq(A, B, rcond=None)):
        onp.testing.assert_allclose(g.asnumpy(), w_, rtol=1e-6, atol=1e-8)


def test_eigh_upper_reads_the_upper_triangle():
    m = onp.array([[2.0, 1.0], [5.0, 3.0]], onp.float32)     # not symmetric: the triangle matters
    lo = np.linalg.eigvalsh(np.array(m)).asnumpy()
    up = np.linalg.eigvalsh(np.array(m), upper=True).asnumpy()
    onp.testing.assert_allclose(lo, onp.linalg.eigvalsh(m, UPLO="L"), rtol=1e-5)
    onp.testing.assert_allclose(up, onp.linalg.eigvalsh(m, UPLO="U"), rtol=1e-5)
    w, _ = np.linalg.eigh(np.array(m), upper=True)
    onp.testing.assert_allclose(w.asnumpy(), up, rtol=1e-6)


def test_dtype_groups():
    assert np.floating_dtypes == [np.float16, np.float32, np.float64]
    assert np.numeric_dtypes == np.integer_dtypes + np.floating_dtypes
    assert np.boolean_dtypes == [np.bool_] and len(np.integer_dtypes) == 8


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "symmetric", "wrap", "maximum",
                                  "minimum", "mean", "median"])
@pytest.mark.parametrize("width", [((1, 2), (0, 3)), 2, (1, 2)])
def test_pad_modes_match_numpy(mode, width):
    x = onp.arange(12, dtype=onp.float32).reshape(3, 4)
    imp, hyb = _both(lambda z: np.pad(z, width, mode=mode), np.array(x))
    want = onp.pad(x, width, mode=mode)
    onp.testing.assert_array_equal(imp.asnumpy(), want)
    onp.testing.assert_array_equal(hyb.asnumpy(), want)


def test_pad_constant_value_and_bad_width():
    got = np.pad(np.ones((2,)), (1, 1), constant_values=7).asnumpy()
    onp.testing.assert_array_equal(got, [7, 1, 1, 7])
    with pytest.raises(mx.MXNetError):
        np.pad(np.ones((2,)), (-1, 1))


def test_unravel_index_matches_numpy_and_traces():
    idx = onp.array([[0, 5], [7, 11]], onp.int32)
    want = onp.unravel_index(idx, (3, 4))
    imp, hyb = _both(lambda z: np.unravel_index(z, (3, 4)), np.array(idx, dtype="int32"))
    for got in (imp, hyb):
        assert len(got) == 2
        for g, w in zip(got, want):
            onp.testing.assert_array_equal(g.asnumpy(), w)
            assert g.dtype == onp.int64


def test_unravel_index_takes_an_int_shape():
    got = np.unravel_index(np.array([3, 9], dtype="int32"), 10)
    assert len(got) == 1 and got[0].asnumpy().tolist() == [3, 9]


def test_apply_along_axis_gives_numpy_slices():
    data = onp.arange(6).reshape(2, 3)
    seen = []
    got = np.apply_along_axis(lambda v: seen.append(type(v)) or v.mean(), 1, np.array(data, dtype="int64"))
    assert seen == [onp.ndarray, onp.ndarray]            # MXNet's fallback: NumPy's own call
    assert got.dtype == onp.float64 and got.asnumpy().tolist() == [1.0, 4.0]


def test_npx_variadic_ops_count_their_inputs():
    xs = [np.array([1.0, 2.0]), np.array([3.0, 4.0]), np.array([5.0, 6.0])]
    assert mx.npx.add_n(*xs).asnumpy().tolist() == [9.0, 12.0]
