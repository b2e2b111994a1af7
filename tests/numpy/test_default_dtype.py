"""`npx.set_np(dtype=True)`: MXNet's float64 default for creation, window, random and division
ops, and int64 for `arange` of integers."""
import numpy as onp

from framework import np
from framework.util import use_np_default_dtype

CALLS = [lambda: np.hanning(4), lambda: np.hamming(4), lambda: np.blackman(4),
         lambda: np.random.uniform(-1, 1, size=3), lambda: np.random.normal(0, 0.1, 3),
         lambda: np.random.gamma(3), lambda: np.random.chisquare(2, 4),
         lambda: np.true_divide(np.array([1, 2], dtype=onp.int64), 4),
         lambda: np.true_divide(4.0, np.array([1, 2], dtype=onp.int64)),
         lambda: np.array([1, 2], dtype=onp.int64) / np.array([2, 2], dtype=onp.int64),
         lambda: np.arange(0.5, 3), lambda: np.ones(2)]


def test_default_mode_float32():
    assert {c().dtype for c in CALLS} == {onp.dtype(onp.float32)}
    assert np.arange(3, 7, 2).dtype == onp.float32


@use_np_default_dtype
def _in_default_dtype_mode():
    return [c().dtype for c in CALLS], np.arange(3, 7, 2).dtype


def test_numpy_default_dtype_mode():
    dtypes, arange_int = _in_default_dtype_mode()
    assert set(dtypes) == {onp.dtype(onp.float64)}
    assert arange_int == onp.int64
    assert np.ones(1).dtype == onp.float32        # the mode ended with the call
