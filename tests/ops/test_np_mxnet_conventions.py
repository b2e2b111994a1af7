"""Where MXNet 2's `np` differs from NumPy on purpose: kernel errors are `MXNetError` (still
`ValueError`s), `sort`/`argsort` take `descending` as their third positional argument; and where
it follows NumPy: integer `linspace` rounds like NumPy."""
from __future__ import annotations

import numpy as onp
import pytest

import framework as mx
from framework import np


@pytest.mark.parametrize("a,b", [((2, 3), (2, 3)), ((), (3,)), ((2, 2, 1), (3, 1, 2))])
def test_matmul_shape_mismatch_is_mxnet_error(a, b):
    with pytest.raises(mx.MXNetError) as info:
        np.matmul(np.ones(a), np.ones(b))
    assert isinstance(info.value, ValueError) and "_npi_matmul" in str(info.value)


def test_reduction_of_empty_axis_is_mxnet_error():
    with pytest.raises(mx.MXNetError, match="zero-size"):
        np.max(np.ones((0, 3)), axis=0)


def test_linspace_arguments():
    with pytest.raises(mx.MXNetError, match="non-negative"):
        np.linspace(0, 1, -1)
    with pytest.raises(mx.MXNetError, match="integer"):
        np.linspace(0, 1, 2.5)
    assert np.linspace(0, 1, onp.int64(3)).shape == (3,)
    got = np.linspace(-3, 2, 7, dtype="int32").asnumpy()
    onp.testing.assert_array_equal(got, onp.linspace(-3, 2, 7, dtype="int32"))


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_sort_argsort_descending_positional(axis):
    x = onp.random.uniform(size=(3, 4)).astype(onp.float32)
    onp.testing.assert_array_equal(np.argsort(np.array(x), axis, True).asnumpy(),
                                   onp.argsort(-x, axis))
    onp.testing.assert_array_equal(np.sort(np.array(x), axis, True).asnumpy(),
                                   -onp.sort(-x, axis))
    onp.testing.assert_array_equal(np.argsort(np.array(x), axis=axis).asnumpy(),
                                   onp.argsort(x, axis, kind="stable"))


@pytest.mark.parametrize("fn", ["argmax", "argmin"])
def test_arg_extremes_of_a_0d_array_and_their_errors(fn):
    x = np.array(5.0)
    for axis in (0, -1):
        got = getattr(np, fn)(x, axis=axis)
        assert got.shape == getattr(onp, fn)(onp.array(5.0), axis=axis).shape == ()
        assert int(got) == 0 and got.dtype == onp.int64
    for bad, axis in [(x, 1), (np.ones((5, 0, 3)), 1), (np.ones((5, 0, 3)), None),
                      (np.ones((5, 3)), 3)]:
        with pytest.raises(mx.MXNetError):
            getattr(np, fn)(bad, axis=axis)
    assert getattr(np, fn)(np.ones((5, 0, 3)), axis=0).shape == (0, 3)


@pytest.mark.parametrize("axis", [0, -1])
def test_squeeze_of_a_0d_array_along_0_as_numpy(axis):
    assert np.squeeze(np.array(5.0), axis=axis).shape == onp.squeeze(onp.array(5.0), axis=axis).shape
    with pytest.raises(mx.MXNetError):
        np.squeeze(np.array(5.0), axis=1)
