"""With intra-op threads, a static cached op splits a batch over the threads (one hand-over per
forward), but only for graphs whose samples are independent — proved on the first call of each
signature by running both ways."""
import numpy as np
import pytest

import framework as mx
from framework.compiler import CachedOp, Plan
from framework.ops import parallel
from fixture_util import load_fixture


@pytest.fixture
def intra2():
    prev = parallel.set_intra_op_threads(2)
    yield
    parallel.set_intra_op_threads(prev)


def _op(name):
    sym, params, inputs, _ = load_fixture("mxnet-1.9.1", name)
    names = sym.list_inputs()
    di = names.index("data")
    op = CachedOp(sym, names, {"static_alloc": True, "static_shape": True, "data_indices": [di]})
    return sym, names, op, [np.asarray({**params, **inputs}[n]) for n in names], di


def test_independent_samples_are_split(intra2):
    sym, names, op, args, di = _op("mini_resnet_v1")
    x = np.concatenate([args[di] * (1 + 0.1 * k) for k in range(4)])
    feed = list(args)
    feed[di] = x
    want = Plan(sym, names).run(feed)
    first = op(feed)
    sig = op._signature(feed)
    assert op._split_ok[sig] is True
    again = op(feed)                                   # now through the split path
    for w, a, b in zip(want, first, again):
        np.testing.assert_allclose(a, w, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(b, w, rtol=1e-5, atol=1e-6)
    half = feed[di][:len(feed[di]) // 2].shape
    assert any(s == (half, feed[di].dtype.num) for s in op.signatures)   # halves ran


def test_graph_mixing_samples_keeps_the_whole_batch(intra2):
    from framework.gluon import HybridBlock, nn

    class Centre(HybridBlock):
        def __init__(self):
            super().__init__()
            self.fc = nn.Dense(3, in_units=4)

        def forward(self, x):
            return self.fc(x - x.mean(axis=0, keepdims=True))  # depends on the other samples

    net = Centre()
    net.initialize()
    net.hybridize(static_alloc=True, static_shape=True)
    x = mx.np.array(np.random.default_rng(1).standard_normal((6, 4)).astype("f"))
    ref = Centre.forward(net, x).asnumpy()               # imperative
    for _ in range(3):
        np.testing.assert_allclose(net(x).asnumpy(), ref, rtol=1e-5, atol=1e-6)
    op = net._cached_op
    assert op._split_ok and not any(op._split_ok.values())


def test_serial_mode_never_splits():
    _, _, op, args, di = _op("mini_resnet_v1")
    feed = list(args)
    feed[di] = np.concatenate([args[di]] * 2)
    op(feed)
    assert not op._split_ok
