"""Indexing ops (slice, slice_axis, slice_like, Crop, take, pick, one_hot, where, clip…) and the
front-end's `x[key]`, `x[key] = v`, `x += y` (imperative and traced)."""
import numpy as onp
import pytest

from framework import np
from framework.base import MXNetError
from framework.symbol.trace import Tracer, tracing
from _helpers import close, rnd, run_op

X = rnd(2, 6, 5, 4, seed=21)


def _py_slice_ref(b, e, s, n):
    # MXNet GetIndexRange (src/operator/tensor/matrix_op-inl.h)
    s = 1 if s is None else s
    eg = e is not None
    b = (n - 1 if s < 0 else 0) if b is None else b
    e = (-1 if s < 0 else n) if e is None else e
    b = b + n if b < 0 else b
    e = e + n if (e < 0 and eg) else e
    b = 0 if (b < 0 and s > 0) else b
    b = n - 1 if (b > n - 1 and s < 0) else b
    if b < 0 or b > n - 1:
        return []
    e = min(max(e, -1), n)
    return [i for i in range(b, e, s)] if (e > b if s > 0 else e < b) else []


@pytest.mark.parametrize("b", [None, -7, -3, -1, 0, 2, 4, 6])
@pytest.mark.parametrize("e", [None, -7, -2, 0, 3, 6])
@pytest.mark.parametrize("s", [None, 1, 2, -1, -2])
def test_slice_semantics_one_axis(b, e, s):
    x = onp.arange(5, dtype=onp.float32)
    out = run_op("slice", x, begin=(b,), end=(e,), step=(s,))
    assert out.tolist() == [float(i) for i in _py_slice_ref(b, e, s, 5)]


def test_slice_fixture_cases():
    close(run_op("slice", X, begin="(None, 1, 0)", end="(None, 5, None)", step="(None, 2, 2)"),
          X[:, 1:5:2, 0::2])
    close(run_op("slice", X, begin="(None, None, -1)", end="(None, None, None)",
                 step="(1, 1, -1)"), X[:, :, ::-1])
    close(run_op("slice", X, begin="[None, -1, None, 1]", end="[None, -2, None, 4]",
                 step="[None, -1, None, None]"), X[:, -1:-2:-1, :, 1:4])
    close(run_op("slice", X, begin=(0, 0, 0, 0), end=(1, 2, 3, 2)), X[:1, :2, :3, :2])


def test_slice_axis_like_crop():
    close(run_op("slice_axis", X, axis=2, begin=1, end=-1), X[:, :, 1:-1])
    close(run_op("slice_axis", X, axis=-1, begin=-3, end=None), X[..., -3:])
    like = onp.zeros((1, 2, 3, 2), onp.float32)
    close(run_op("slice_like", X, like, axes=(1, 2)), X[:, :2, :3])
    close(run_op("slice_like", X, like), X[:1, :2, :3, :2])
    close(run_op("Crop", X, num_args=1, h_w=(3, 2), offset=(1, 1)), X[:, :, 1:4, 1:3])
    close(run_op("Crop", X, like, num_args=2, center_crop=True), X[:, :, 1:4, 1:3])


def test_take_pick_one_hot():
    idx = onp.array([[0, 2], [5, 7]], onp.float32)
    close(run_op("take", X, idx, axis=1), onp.take(X, [[0, 2], [5, 5]], axis=1))       # clip
    close(run_op("take", X, idx, axis=1, mode="wrap"), onp.take(X, [[0, 2], [5, 1]], axis=1))
    d = rnd(3, 4)
    ids = onp.array([0, 3, 9], onp.float32)
    close(run_op("pick", d, ids, axis=1), d[onp.arange(3), [0, 3, 3]])
    close(run_op("pick", d, ids, axis=1, mode="wrap", keepdims=True),
          d[onp.arange(3), [0, 3, 1]][:, None])
    oh = run_op("one_hot", onp.array([1, 0, 5], onp.float32), depth=3)
    close(oh, [[0, 1, 0], [1, 0, 0], [0, 0, 0]])
    oh = run_op("one_hot", onp.array([2], onp.int32), depth=3, on_value=5, off_value=-1,
                dtype="int32")
    assert oh.dtype == onp.int32 and oh.tolist() == [[-1, -1, 5]]


def test_where_clip():
    a = rnd(2, 3, 4)
    close(run_op("where", (a > 0).astype(onp.float32), a, a * 0.1), onp.where(a > 0, a, a * 0.1))
    cond = onp.array([1, 0], onp.float32)                      # 1-D condition selects rows
    close(run_op("where", cond, a, -a), onp.concatenate([a[:1], -a[1:]]))
    close(run_op("_npi_where", a > 0, a, onp.float32(0) * a[:1]), onp.where(a > 0, a, 0))
    close(run_op("_npi_where_lscalar", a > 0, a, scalar=2.0), onp.where(a > 0, 2.0, a))
    close(run_op("_npi_where_rscalar", a > 0, a, scalar=2.0), onp.where(a > 0, a, 2.0))
    close(run_op("clip", a, a_min=-0.5, a_max=0.5), onp.clip(a, -0.5, 0.5))
    close(run_op("clip", a, a_min="-0.5", a_max="None"), onp.maximum(a, -0.5))


def test_gather_nd_boolean_mask():
    idx = onp.array([[0, 1], [2, 0]], onp.int64)
    close(run_op("gather_nd", X, idx), X[[0, 1], [2, 0]])
    from framework.ops import get_op
    op = get_op("_npi_boolean_mask")       # data-dependent output shape: no static inference
    close(op.kernel(op.parse_attrs({}), X[:, 0, 0, 0], onp.array([1, 0], onp.float32)),
          X[:1, 0, 0, 0])


# -- front-end indexing ---------------------------------------------------------------------------
KEYS = [1, -1, slice(1, 3), slice(None, None, 2), slice(4, 0, -2), (slice(None), 1),
        (1, slice(None), -2), (Ellipsis, 1), (None, 1), (slice(None), None, slice(2, 4)),
        (0, 1, 2, 3), (slice(-1, None), Ellipsis, slice(None, None, -1)), ()]


@pytest.mark.parametrize("key", KEYS, ids=[repr(k) for k in KEYS])
def test_getitem_imperative_and_traced(key):
    x = np.array(X)
    want = X[key]
    got = x[key]
    assert got.shape == want.shape
    close(got, want)
    t = Tracer()
    t.bind_var(x, "data")
    with tracing(t):
        y = x[key]
    close(y, want)
    assert y is x or t.has(y)


def test_traced_getitem_records_mxnet_ops():
    x = np.array(X)
    t = Tracer()
    t.bind_var(x, "data")
    with tracing(t):
        a = x[1]
        b = x[:, 1:3]
        c = x[:, -1, :, 1:4]
    ops = [(n.opname, dict(n.parsed)) for n in t.symbol([a, b, c]).topo() if not n.is_var]
    assert ops[0] == ("slice", {"begin": (1,), "end": (2,), "step": ()})
    assert ops[1][0] == "_npx_reshape" and ops[1][1]["newshape"] == (-3, -4)
    assert ops[2] == ("slice", {"begin": (None, 1), "end": (None, 3), "step": (None, None)})
    assert ops[3][1]["newshape"] == (-2, -2, -4)
    assert ops[4] == ("slice", {"begin": (None, -1, None, 1), "end": (None, -2, None, 4),
                                "step": (None, -1, None, None)})
    assert ops[5][1]["newshape"] == (-2, -3, -2, -2, -4)


def test_advanced_indexing_imperative():
    x = np.array(X)
    close(x[[0, 1]], X[[0, 1]])
    close(x[np.array([1, 0], dtype="int32")], X[[1, 0]])
    m = x > 0
    close(x[m], X[X > 0])
    close(x[:, [0, 2], 1], X[:, [0, 2], 1])


def test_getitem_views_share_memory():
    x = np.array(onp.arange(8, dtype=onp.float32).reshape(2, 2, 2))
    y = x[0]
    y[:] = -1
    assert x.asnumpy()[0].tolist() == [[-1, -1], [-1, -1]]


def test_setitem():
    x = np.zeros((3, 4))
    x[1] = 5
    x[:, 0] = np.array([1, 2, 3])
    x[x > 4] = 7
    x[2, 1:3] = [8, 9]
    want = onp.zeros((3, 4), onp.float32)
    want[1] = 5
    want[:, 0] = [1, 2, 3]
    want[want > 4] = 7
    want[2, 1:3] = [8, 9]
    close(x, want)
    t = Tracer()
    t.bind_var(x, "data")
    with tracing(t):
        with pytest.raises(MXNetError, match="not supported inside a hybridized"):
            x[0] = 1


def test_inplace_imperative_and_traced():
    x = np.ones((2, 3))
    buf = x._data
    x += 2
    x *= np.array([1, 2, 3])
    x -= 1
    x /= 2
    assert x._data is buf
    close(x, (onp.ones((2, 3)) * 3 * [1, 2, 3] - 1) / 2)
    t = Tracer()
    t.bind_var(x, "data")
    with tracing(t):
        x2 = x
        x2 += 1
    assert x2 is not x and t.has(x2)
    assert x._data is buf


def test_view_results_do_not_alias_inputs_imperatively():
    w = np.array(onp.arange(6, dtype=onp.float32))
    for v in (w.reshape(2, 3), w.reshape(-1), np.expand_dims(w, 0), np.flip(w),
              np.broadcast_to(w, (2, 6)), np.split(w, 2)[0], w.reshape(2, 3).T):
        v += 100
        v[...] = -1
    assert w.tolist() == list(range(6))
    b = np.broadcast_to(np.ones(3), (2, 3))
    b[0] = 5                                     # broadcast result is writeable
    assert b.tolist() == [[5, 5, 5], [1, 1, 1]]
