"""Official NumPy functions and ufuncs on framework arrays (MXNet's dispatch protocol)."""
import numpy as onp
import pytest

from framework import np, npx
from framework.ndarray import ndarray
from framework.numpy_dispatch_protocol import (_NUMPY_ARRAY_FUNCTION_LIST, _NUMPY_ARRAY_UFUNC_LIST,
                                               with_array_function_protocol)


def test_listed_functions_run_the_framework_op():
    a = np.array([[1.0, 5.0], [3.0, 2.0]])
    for r, want in [(onp.sum(a, axis=0), [4.0, 7.0]), (onp.concatenate([a, a])[2], [1.0, 5.0]),
                    (onp.diff(a, axis=1), [[4.0], [-1.0]]), (onp.diagonal(a), [1.0, 2.0])]:
        assert isinstance(r, ndarray)
        assert r.asnumpy().tolist() == want


def test_unlisted_functions_fall_back_to_numpy_and_return_framework_arrays():
    a = np.array([3.0, 1.0, onp.nan])
    r = onp.nanmax(a)
    assert float(r) == 3.0
    s = onp.searchsorted(np.array([1.0, 2.0, 3.0]), np.array([2.5]))
    assert isinstance(s, ndarray) and s.asnumpy().tolist() == [2]
    v = np.arange(4.0)
    real = onp.real(v)          # NumPy returns a view of its input: the fallback copies it
    real[0] = 9
    assert float(v[0]) == 0.0


def test_ufuncs():
    a, b = np.array([1.0, 2.0]), onp.array([3.0, 4.0])
    for r in (onp.add(a, b), b + a, onp.logaddexp(a, 0.0), onp.sqrt(a), b > a):
        assert isinstance(r, ndarray)
    assert (b + a).asnumpy().tolist() == [4.0, 6.0]
    c = onp.zeros(2)
    c += a                  # NumPy's in-place operator keeps NumPy's array
    assert type(c) is onp.ndarray and c.tolist() == [1.0, 2.0]
    out = np.zeros(2)
    onp.multiply(a, 2, out=out)
    assert out.asnumpy().tolist() == [2.0, 4.0]
    assert isinstance(onp.frexp(a)[0], ndarray)     # not in the list: NumPy's own
    with pytest.raises(TypeError):
        onp.add.reduce(a)


def test_lists_and_fallback_modules():
    assert "linalg.tensorsolve" in _NUMPY_ARRAY_FUNCTION_LIST and "fabs" in _NUMPY_ARRAY_UFUNC_LIST
    assert "take_along_axis" in np.fallback.__all__ and np.fallback_linalg.__all__
    x = np.array([[3.0, 1.0], [2.0, 4.0]])
    assert np.take_along_axis(x, np.array([[1], [0]], dtype=onp.int64), 1).asnumpy().tolist() == [[1.0], [2.0]]
    assert np.linalg.matrix_power(x, 2).asnumpy().tolist() == (x.asnumpy() @ x.asnumpy()).tolist()
    assert int(np.argpartition(np.array([3, 1, 2]), 0)[0]) == 1
    assert float(np.ptp(x)) == 3.0

    @with_array_function_protocol
    def boom():
        raise KeyError("x")
    with pytest.raises(RuntimeError, match="array function protocol failed"):
        boom()


def test_numpy1_aliases_and_interpolation_keyword():
    x = np.array([[0.0, 2.0], [3.0, 4.0]])
    # MXNet registers `sometrue` and `product` as aliases of any/prod; NumPy 2 dropped them
    assert bool(np.sometrue(x)) and not bool(np.all(x))
    assert np.product(x, axis=0).asnumpy().tolist() == [0.0, 8.0]
    assert isinstance(np.sometrue(x, axis=1), ndarray)
    # MXNet's fallback kept NumPy 1.x's `interpolation=`: NumPy 2's `method=`
    y = np.array([[1.0, onp.nan, 3.0], [4.0, 5.0, 6.0]])
    for fn, q in ((np.nanpercentile, 40), (np.nanquantile, 0.4)):
        for kind in ("lower", "higher", "nearest", "midpoint", "linear"):
            got = fn(y, q, axis=1, interpolation=kind)
            want = getattr(onp, fn.__name__)(y.asnumpy(), q, axis=1, method=kind)
            assert isinstance(got, ndarray) and got.asnumpy().tolist() == want.tolist()
    with pytest.raises(ValueError):
        np.nanquantile(y, 0.4, interpolation="no-such-method")


def test_shares_memory_zero_copy():
    x = np.zeros((4, 4))
    assert onp.shares_memory(x[0], x[0])
    assert not onp.may_share_memory(x[0], x[1])
    assert npx is not None
