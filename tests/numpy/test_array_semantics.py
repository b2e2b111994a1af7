"""MXNet's array semantics where they differ from plain NumPy views or NumPy 2: basic slicing
copies unless the result is one flat range, C order only, formatting, 0-d nonzero/save,
wrapping integer creation, stacked solve, DLPack and the array-API namespace."""
import numpy as onp
import pytest

import framework as mx
from framework import np, npx


def test_non_contiguous_slice_is_a_copy():
    x = np.arange(8).reshape(2, 2, 2)
    y = x[:, :, 1]
    y[:] = -1
    assert x.asnumpy().tolist() == onp.arange(8).reshape(2, 2, 2).tolist()


@pytest.mark.parametrize("key", [1, (1, 0), (slice(None),), (1, slice(0, 1)), (1, Ellipsis),
                                 (None, 1)])
def test_contiguous_slice_is_a_view(key):
    x = np.zeros((2, 2, 2))
    x[key][...] = 5
    assert (x.asnumpy() == 5).sum() == onp.zeros((2, 2, 2))[key].size


@pytest.mark.parametrize("key", [(slice(None), 0), (slice(None, None, 2),), (Ellipsis, 1),
                                 (slice(None, None, -1),)])
def test_strided_slices_copy(key):
    x = np.zeros((4, 3))
    x[key][...] = 5
    assert float(x.sum()) == 0.0


@pytest.mark.parametrize("fn", [lambda: np.zeros((2,), order="F"),
                                lambda: np.ones((2,), order="F"),
                                lambda: np.empty((2,), order="F"),
                                lambda: np.full((2,), 1, order="F"),
                                lambda: np.zeros_like(np.ones(2), order="F"),
                                lambda: np.ravel(np.ones(2), order="F"),
                                lambda: np.ones(2).copy(order="F")])
def test_fortran_order_refused(fn):
    with pytest.raises(NotImplementedError):
        fn()


def test_format_spec():
    assert "{:0.3g}".format(np.array(onp.pi)) == "3.14"
    assert "{}".format(np.array([1.0])) == str(onp.array([1.0], dtype=onp.float32))
    with pytest.raises(TypeError):
        "{:30}".format(np.array([1.0]))


def test_save_keeps_0d_shape(tmp_path):
    f = str(tmp_path / "a.npy")
    npx.save(f, np.array(7, dtype=onp.int64))
    assert onp.load(f).shape == ()
    assert npx.load(f).shape == ()


def test_uint8_creation_wraps():
    assert np.array([-1, 256, 3], dtype=onp.uint8).asnumpy().tolist() == [255, 0, 3]


def test_nonzero_of_0d():
    (i,) = np.nonzero(np.array(3.0))
    assert i.asnumpy().tolist() == [0]
    (j,) = np.nonzero(np.array(0.0))
    assert j.shape == (0,)


@pytest.mark.parametrize("hybridize", [False, True])
def test_npx_nonzero_of_0d_is_one_row_of_one_coordinate(hybridize):
    class Nonzero(mx.gluon.HybridBlock):
        def forward(self, a):
            return npx.nonzero(a)
    blk = Nonzero()
    if hybridize:
        blk.hybridize()
    hit, miss = blk(np.array(3.0)), blk(np.array(0.0))
    assert hit.shape == (1, 1) and hit.asnumpy().tolist() == [[0]] and hit.dtype == onp.int64
    assert miss.shape == (0, 1)
    assert blk(np.array([[0, 1], [2, 0]])).asnumpy().tolist() == [[0, 1], [1, 0]]


def test_solve_stack_of_vectors():
    a = onp.random.RandomState(0).rand(3, 4, 4) + 4 * onp.eye(4)
    b = onp.random.RandomState(1).rand(3, 4)
    x = np.linalg.solve(np.array(a, dtype=onp.float64), np.array(b, dtype=onp.float64))
    assert x.shape == (3, 4)
    onp.testing.assert_allclose(onp.einsum("nij,nj->ni", a, x.asnumpy()), b, rtol=1e-10)


def test_other_device_copies():
    a = np.ones(3)
    assert a.to_device(mx.cpu()) is a
    assert not onp.shares_memory(a.to_device(mx.cpu_pinned(0)).asnumpy(), a._data)
    assert not onp.may_share_memory(a.as_in_context(mx.cpu(1))._data, a._data)


def test_dlpack_read_and_write():
    a = np.arange(4.0)
    b = npx.from_dlpack(npx.to_dlpack_for_read(a))
    assert b.asnumpy().tolist() == [0, 1, 2, 3]
    c = npx.from_dlpack(npx.to_dlpack_for_write(a))
    c += 1
    assert a.asnumpy().tolist() == [1, 2, 3, 4]
    assert onp.from_dlpack(a).tolist() == [1, 2, 3, 4]


def test_array_namespace():
    x = np.array([1.0])
    assert x.__array_namespace__() is np
    assert x.__array_namespace__("2021.12") is np
    for bad in ("2020.09", "2021.24"):
        with pytest.raises(ValueError):
            x.__array_namespace__(bad)


def test_multinomial_float32_and_empty_pvals():
    counts = np.random.multinomial(100, np.array([0.1, 0.2, 0.3, 0.4]))
    assert int(counts.sum()) == 100
    assert np.random.multinomial(10, [], size=(2,)).shape == (2, 0)


def test_tril_of_0d_is_an_mxnet_error():
    for fn in (np.tril, np.triu):
        with pytest.raises(mx.MXNetError):
            fn(np.array(10.0))
