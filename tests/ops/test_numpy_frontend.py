"""`framework.np` imperative behaviour: creation and dtype rules (as MXNet 2.0.0b1), printing,
array methods, maths/reductions/shape functions vs NumPy, random seeding."""
import numpy as onp
import pytest

import framework as mx
from framework import np
from _helpers import close

A = onp.random.RandomState(0).uniform(-2, 2, (2, 3, 4)).astype(onp.float32)


def test_array_dtype_rules():
    assert np.array([1, 2, 3]).dtype == np.float32          # Python data → float32
    assert np.array([True, False]).dtype == np.float32
    assert np.array(5).shape == () and np.array(5).dtype == np.float32
    assert np.array(onp.arange(3)).dtype == np.float32      # NumPy input too (MXNet 2.0's rule)
    assert np.array(onp.zeros(2, onp.float64)).dtype == np.float32
    assert np.array(onp.arange(3), dtype=None).dtype == np.float32
    assert np.array(np.array([1, 2], dtype="int8")).dtype == np.int8   # framework arrays keep it
    with mx.util.np_default_dtype(True):         # NumPy's defaults: arrays keep, data → float64
        assert np.array(onp.arange(3)).dtype == np.int64
        assert np.array([1, 2]).dtype == np.float64 and np.zeros(2).dtype == np.float64
    assert np.array([1, 2], dtype="int32").dtype == np.int32
    a = np.array(A)
    b = np.array(a)
    assert b._data is not a._data
    assert np.asarray(a) is a
    assert np.array([np.array([1.0, 2.0]), np.array([3.0, 4.0])]).shape == (2, 2)


def test_creation_functions():
    assert np.zeros((2, 3)).dtype == np.float32 and np.zeros(4).shape == (4,)
    assert np.ones((2,), dtype=int).dtype == np.int64
    assert np.full((2,), 3).dtype == np.int64            # MXNet 2.x: int fill → int64
    assert np.full((2,), True).dtype == np.bool_
    assert np.full((2, 2), 0.5).dtype == np.float32
    close(np.full((2, 2), 0.5), onp.full((2, 2), 0.5))
    close(np.arange(5), onp.arange(5))
    assert np.arange(5).dtype == np.float32
    close(np.arange(1, 2, 0.25), [1, 1.25, 1.5, 1.75])
    assert np.arange(3, dtype="int32").dtype == np.int32
    close(np.linspace(0, 1, 5), onp.linspace(0, 1, 5))
    close(np.eye(3, 4, k=1), onp.eye(3, 4, k=1))
    close(np.identity(2), onp.eye(2))
    z = np.zeros_like(np.array([1, 2], dtype="int32"))
    assert z.dtype == np.int32 and z.tolist() == [0, 0]
    close(np.ones_like(A), onp.ones_like(A))
    close(np.full_like(A, 7), onp.full_like(A, 7))
    assert np.empty((2, 2)).shape == (2, 2)
    c = np.copy(np.array(A))
    close(c, A)


def test_repr_follows_mxnet():
    assert repr(np.array([1, 2])) == "array([1., 2.])"
    assert repr(np.array([1, 2], dtype="int32")) == "array([1, 2], dtype=int32)"
    assert repr(np.array([1, 2], dtype="int32") + 1.5) == "array([2.5, 3.5], dtype=float64)"
    assert repr(np.array([1.0]) > 0) == "array([ True])"
    assert repr(np.mean(np.array([1, 2], dtype="float16"))) == "array(1.5)"


def test_dtype_names_and_constants():
    assert np.float32 is onp.float32 and np.bool_ is onp.bool_ and np.int8 is onp.int8
    assert np.pi == onp.pi and np.e == onp.e and np.inf == onp.inf and np.newaxis is None
    assert onp.isnan(np.nan)


def test_arithmetic_operators_and_dtypes():
    a, b = np.array(A), np.array(A[:1] + 3)
    close(a + b, A + A[:1] + 3)
    close(a - 1, A - 1)
    close(1 - a, 1 - A)
    close(a * 2, A * 2)
    close(2 / (b), 2 / (A[:1] + 3))
    close(a / b, A / (A[:1] + 3))
    close(a ** 2, A ** 2, rtol=1e-5)
    close(2 ** a, 2.0 ** A, rtol=1e-5)
    close(-a, -A)
    close(abs(a), onp.abs(A))
    close(a // 0.7, A // onp.float32(0.7))
    close(a % 0.7, onp.mod(A, onp.float32(0.7)), atol=1e-6)
    i = np.array([1, 2], dtype="int32")
    assert (i / i).dtype == np.float32 and (i // 2).dtype == np.int32
    assert (i ** 2).dtype == np.int32 and (2 ** i).dtype == np.int32 and (-i).dtype == np.int32
    assert (i + np.array([1.5])).dtype == np.float32
    u = np.array([1, 2], dtype="uint8") + np.array([1], dtype="int8")
    assert u.dtype == np.int16
    close(onp.float32(2) * a, 2 * A)          # NumPy scalar on the left


def test_comparisons_and_logic():
    a = np.array(A)
    assert (a > 0).dtype == np.bool_
    onp.testing.assert_array_equal(a > 0, A > 0)
    onp.testing.assert_array_equal(0 < a, A > 0)
    onp.testing.assert_array_equal(a <= a[:1], A <= A[:1])
    onp.testing.assert_array_equal(np.logical_and(a > 0, a < 1), (A > 0) & (A < 1))
    onp.testing.assert_array_equal(np.logical_not(a > 0), ~(A > 0))
    assert (a == None) is False and (a != None) is True  # noqa: E711


def test_unary_maths():
    a = np.array(A)
    p = np.abs(a) + 0.5
    for f, ref, x, xr in [(np.exp, onp.exp, a, A), (np.log, onp.log, p, onp.abs(A) + 0.5),
                          (np.tanh, onp.tanh, a, A), (np.sqrt, onp.sqrt, p, onp.abs(A) + 0.5),
                          (np.floor, onp.floor, a, A), (np.sign, onp.sign, a, A),
                          (np.arctan, onp.arctan, a, A), (np.expm1, onp.expm1, a, A)]:
        close(f(x), ref(xr), rtol=1e-5)
    close(np.round(np.array([0.5, 1.5, 2.5])), [0, 2, 2])
    close(np.rint(np.array([0.5, 1.5, 2.5, -2.5])), [0, 1, 2, -3])    # MXNet's rint
    close(a.round(1), onp.round(A, 1))
    assert np.exp(1.0) == pytest.approx(onp.e)


def test_binary_functions():
    a = np.array(A)
    close(np.maximum(a, 0.5), onp.maximum(A, 0.5))
    close(np.minimum(0.5, a), onp.minimum(A, 0.5))
    close(np.maximum(a, a[:, :1]), onp.maximum(A, A[:, :1]))
    close(np.power(np.abs(a), a), onp.abs(A) ** A, rtol=1e-5)
    close(np.hypot(a, 2.0), onp.hypot(A, 2.0))
    close(np.clip(a, -0.5, 0.5), onp.clip(A, -0.5, 0.5))
    close(np.clip(a, None, 0.5), onp.minimum(A, 0.5))
    i = np.array([1, 2], dtype="int32")
    r = np.clip(i, 1.5, 2)
    assert r.dtype == np.int32 and r.tolist() == [1, 2]
    close(np.where(a > 0, a, 0), onp.where(A > 0, A, 0))
    close(np.where(a > 0, 1.0, a), onp.where(A > 0, 1.0, A))
    close(np.where(a > 0, 1.0, 2.0), onp.where(A > 0, 1.0, 2.0))
    out = np.zeros(A.shape)
    np.add(a, 1, out=out)
    close(out, A + 1)


def test_reductions():
    a = np.array(A)
    close(np.sum(a), A.sum(), rtol=1e-5)
    close(a.sum(axis=1), A.sum(1), rtol=1e-5)
    close(a.mean(0), A.mean(0), rtol=1e-5)
    close(a.max(1), A.max(1))
    close(np.min(a, axis=(0, 2), keepdims=True), A.min((0, 2), keepdims=True))
    close(np.prod(a, axis=-1), A.prod(-1), rtol=1e-5)
    close(np.std(a, axis=1), A.std(1), rtol=1e-4)
    close(a.var(), A.var(), rtol=1e-4)
    onp.testing.assert_array_equal(a.argmax(axis=2), A.argmax(2))
    assert np.argmax(a).shape == () and np.argmax(a).dtype == np.int64
    close(a.cumsum(axis=1), A.cumsum(1), rtol=1e-5)
    assert bool((a > -10).all()) and bool((a > 1).any())
    close(np.nansum(np.array([1.0, onp.nan, 2.0])), 3.0)
    close(np.average(a, axis=0), A.mean(0), rtol=1e-5)
    assert np.sum(np.array([1, 2], dtype="int32")).dtype == np.int32
    assert np.mean(np.array([1, 2], dtype="int32")).dtype == np.float32


def test_methods_follow_mxnet_signatures():
    x = np.arange(6).reshape(2, 3)
    assert x.reshape(3, 2).shape == (3, 2) and x.reshape((3, 2)).shape == (3, 2)
    assert x.reshape(-1).shape == (6,) and np.reshape(x, (3, -1)).shape == (3, 2)
    close(x.transpose(), onp.arange(6).reshape(2, 3).T)
    close(x.transpose(1, 0), onp.arange(6).reshape(2, 3).T)
    close(x.transpose((1, 0)), onp.arange(6).reshape(2, 3).T)
    close(x.T, onp.arange(6).reshape(2, 3).T)
    y = x.astype("int32")
    assert y.dtype == np.int32
    assert y.astype("int32", copy=False) is y
    assert y.astype("int32") is not y
    assert x.flatten().shape == (6,) and x.ravel().shape == (6,)
    assert x.copy()._data is not x._data
    assert x.expand_dims(0).shape == (1, 2, 3) and x.expand_dims(0).squeeze().shape == (2, 3)
    close(x.clip(1, 4), onp.clip(onp.arange(6).reshape(2, 3), 1, 4))
    close(x.dot(x.T), onp.arange(6).reshape(2, 3) @ onp.arange(6).reshape(2, 3).T)
    assert x.swapaxes(0, 1).shape == (3, 2) and x.repeat(2).shape == (12,)
    assert x.tile((2, 1)).shape == (4, 3) and x.flip(0)[0, 0] == 3
    assert x.broadcast_to((4, 2, 3)).shape == (4, 2, 3)
    assert [p.shape for p in x.split(3, axis=1)] == [(2, 1)] * 3
    close(x.take(np.array([2, 0]), axis=1), onp.arange(6).reshape(2, 3)[:, [2, 0]])
    close(np.array([3.0, 1.0, 2.0]).sort(), [1, 2, 3])
    assert np.array([3.0, 1.0, 2.0]).argsort().tolist() == [1, 2, 0]
    close(np.array([3.0, 1.0, 2.0]).topk(k=2), [0, 2])
    nz = np.array([[0, 1], [2, 0]]).nonzero()
    assert [v.tolist() for v in nz] == [[0, 1], [1, 0]]
    with pytest.raises(ValueError):
        x.reshape(4, -1)


def test_shape_functions():
    a, b = np.array(A), np.array(A + 1)
    assert np.concatenate([a, b], axis=1).shape == (2, 6, 4)
    assert np.concatenate([a, b], axis=None).shape == (48,)
    assert np.stack([a, b], axis=-1).shape == (2, 3, 4, 2)
    assert [p.shape for p in np.split(a, [1, 3], axis=2)] == [(2, 3, 1), (2, 3, 2), (2, 3, 1)]
    assert [p.shape[0] for p in np.array_split(np.arange(7), 3)] == [3, 2, 2]
    assert np.moveaxis(a, 0, -1).shape == (3, 4, 2)
    assert np.swapaxes(a, 0, 2).shape == (4, 3, 2)
    assert np.expand_dims(a, (0, 2)).shape == (1, 2, 1, 3, 4)
    close(np.repeat(a, 2, axis=1), onp.repeat(A, 2, 1))
    close(np.repeat(a, 2, axis=-1), onp.repeat(A, 2, -1))
    close(np.tile(a, 2), onp.tile(A, 2))
    close(np.flip(a), onp.flip(A))
    close(np.broadcast_to(a[:, :1], (2, 3, 4)), onp.broadcast_to(A[:, :1], (2, 3, 4)))
    assert np.vstack([np.ones(3), np.ones(3)]).shape == (2, 3)
    assert np.hstack([np.ones(3), np.ones(2)]).shape == (5,)
    close(np.roll(np.arange(4), 1), [3, 0, 1, 2])
    close(np.tril(np.ones((3, 3))), onp.tril(onp.ones((3, 3))))


def test_products_and_linalg():
    a = np.array(A)
    b = np.array(onp.random.RandomState(1).randn(2, 4, 3).astype(onp.float32))
    w = np.array(onp.random.RandomState(2).randn(4, 5).astype(onp.float32))
    close(np.dot(a, w), onp.dot(A, w.asnumpy()), rtol=1e-5, atol=1e-5)
    close(np.matmul(a, b), A @ b.asnumpy(), rtol=1e-5, atol=1e-5)
    close(a @ b, A @ b.asnumpy(), rtol=1e-5, atol=1e-5)
    close(np.einsum("bij,bjk->bik", a, b), A @ b.asnumpy(), rtol=1e-5, atol=1e-5)
    close(np.tensordot(a, b, axes=([1, 2], [2, 1])),
          onp.tensordot(A, b.asnumpy(), ([1, 2], [2, 1])), rtol=1e-5, atol=1e-5)
    close(np.tensordot(a, w, axes=1), onp.tensordot(A, w.asnumpy(), 1), rtol=1e-5, atol=1e-5)
    close(np.inner(a, a), onp.inner(A, A), rtol=1e-5, atol=1e-4)
    close(np.outer(np.arange(3), np.arange(2)), onp.outer(onp.arange(3), onp.arange(2)))
    for kw in [{}, {"axis": -1}, {"axis": (1, 2)}, {"ord": 1, "axis": 2}, {"ord": "fro", "axis": (0, 1)},
               {"ord": onp.inf, "axis": 1}, {"ord": 2, "axis": (1, 2)}, {"ord": 1, "axis": (1, 2)},
               {"ord": "nuc", "axis": (1, 2)}]:
        close(np.linalg.norm(a, **kw), onp.linalg.norm(A.astype(onp.float64), **kw), rtol=1e-4)
    m = np.array([[2.0, 1.0], [1.0, 3.0]])
    close(np.linalg.inv(m), onp.linalg.inv(m.asnumpy()), rtol=1e-5)
    close(np.linalg.det(m), 5.0, rtol=1e-5)
    close(np.linalg.cholesky(m), onp.linalg.cholesky(m.asnumpy()), rtol=1e-5)


def test_random_seeding():
    np.random.seed(42)
    x = np.random.uniform(size=(3,))
    n = np.random.normal(0, 1, size=(2, 2))
    mx.random.seed(42)
    assert np.random.uniform(size=(3,)).tolist() == x.tolist()
    assert np.random.normal(0, 1, size=(2, 2)).tolist() == n.tolist()
    assert x.dtype == np.float32 and np.random.uniform(-1, 1, size=2, dtype="float64").dtype == \
        np.float64
    assert np.random.uniform().shape == ()
    r = np.random.randint(0, 5, size=(10,))
    assert r.dtype == np.int64 and 0 <= int(r.min()) and int(r.max()) < 5
    assert np.random.randn(2, 3).shape == (2, 3) and np.random.rand(4).shape == (4,)
    s = np.arange(10)
    np.random.shuffle(s)
    assert sorted(s.tolist()) == list(range(10))
    assert np.random.choice(5, size=3, replace=False).shape == (3,)


def test_symbol_inputs_compose():
    """Front-end functions accept Symbols (symbol API composition goes through invoke)."""
    from framework.symbol import var
    y = np.exp(var("data")) + 1
    assert y.list_inputs() == ["data"]


def test_broadcast_to_numpy_rule_and_full_with_array_fill():
    assert np.broadcast_to(np.ones((2, 1)), (0, 2, 3)).shape == (0, 2, 3)   # 0 is a real size
    assert np.broadcast_to(np.ones((2, 1)), (-2, 5)).shape == (2, 5)        # -2 keeps the dim
    with pytest.raises(mx.MXNetError):
        np.broadcast_to(np.ones((2, 1)), (3, 5))

    class Fill(mx.gluon.HybridBlock):
        def forward(self, v):
            return np.full((0, 3), v), np.full((2, 2), v)

    net = Fill()
    net.hybridize()
    empty, two = net(np.array(2.0))
    assert empty.shape == (0, 3) and (two.asnumpy() == 2).all()
    assert (net(np.array(5.0))[1].asnumpy() == 5).all()      # the fill value is an input
    assert np.arange(0, 4, None).asnumpy().tolist() == [0, 1, 2, 3]
