"""Sampling operators: np.random draws are graph nodes, so hybridized blocks sample on every call."""
import numpy as onp
import pytest

import framework as mx
from framework.gluon import HybridBlock
from framework.ops.registry import get_op


class _Noisy(HybridBlock):
    def forward(self, x):
        return x + mx.np.random.normal(0.0, 1.0, size=x.shape) * mx.np.random.uniform(1, 2)


def test_hybridized_block_draws_on_every_call():
    net = _Noisy()
    net.hybridize()
    x = mx.np.zeros((50,))
    a, b = net(x).asnumpy(), net(x).asnumpy()
    assert not onp.allclose(a, b)
    mx.random.seed(7)
    c = net(x).asnumpy()
    mx.random.seed(7)
    assert (net(x).asnumpy() == c).all()          # the shared generator decides


def test_exported_graph_keeps_the_sampling_nodes(tmp_path):
    net = _Noisy()
    net.hybridize()
    net(mx.np.zeros((4,)))
    net.export(str(tmp_path / "noisy"))
    ops = {n["op"] for n in __import__("json").load(open(tmp_path / "noisy-symbol.json"))["nodes"]}
    assert {"_npi_normal", "_npi_uniform"} <= ops
    loaded = mx.gluon.SymbolBlock.imports(str(tmp_path / "noisy-symbol.json"), ["data"])
    y1, y2 = loaded(mx.np.zeros((4,))).asnumpy(), loaded(mx.np.zeros((4,))).asnumpy()
    assert y1.shape == (4,) and not onp.allclose(y1, y2)


def test_array_parameters_are_inputs_and_broadcast():
    mx.random.seed(0)
    loc = mx.np.array([[0.0], [100.0]])
    out = mx.np.random.normal(loc, 0.01, size=(2, 1000))
    assert out.shape == (2, 1000) and out.dtype == onp.float32
    onp.testing.assert_allclose(out.asnumpy().mean(axis=1), [0, 100], atol=0.01)
    assert mx.np.random.uniform(mx.np.zeros((3, 1)), mx.np.ones((1, 2))).shape == (3, 2)
    op = get_op("_npi_uniform")
    a = op.parse_attrs({"low": None, "high": 2.0})
    assert op.input_names(a) == ["low"]


def test_scalar_draws_dtypes_and_ranges():
    mx.random.seed(3)
    r = mx.np.random.randint(3, 6, size=(200,))
    assert r.dtype == onp.int64 and set(r.asnumpy().tolist()) == {3, 4, 5}
    assert mx.np.random.uniform().shape == ()
    assert mx.np.random.exponential(size=(2,), ).dtype == onp.float32
    assert mx.np.random.gamma(2.0, 1.0, size=(3,), dtype="float64").dtype == onp.float64
    p = mx.np.random.power(3.0, size=(500,)).asnumpy()
    assert 0 <= p.min() and p.max() <= 1 and p.mean() == pytest.approx(0.75, abs=0.05)


@pytest.mark.parametrize("call", [
    lambda: mx.np.random.gamma(1.0, 0.0),
    lambda: mx.np.random.gamma(mx.np.array(0.0), 1.0),
    lambda: mx.np.random.weibull(-1.0),
    lambda: mx.np.random.pareto(mx.np.array([1.0, 0.0])),
    lambda: mx.np.random.exponential(0.0),
])
def test_non_positive_parameters_raise_value_error(call):
    with pytest.raises(ValueError, match="must be positive"):
        call()


def test_compound_distributions_trace_and_stay_in_range():
    class Net(HybridBlock):
        def forward(self, a):
            return (mx.np.random.beta(a, a, size=(400,)), mx.np.random.chisquare(a, size=(400,)),
                    mx.np.random.f(a, a, size=(400,)))

    net = Net()
    net.hybridize()
    mx.random.seed(1)
    beta, chi, f = (o.asnumpy() for o in net(mx.np.array([4.0])))
    assert 0 < beta.min() and beta.max() < 1 and beta.mean() == pytest.approx(0.5, abs=0.05)
    assert chi.min() > 0 and chi.mean() == pytest.approx(4.0, rel=0.15)   # E[χ²(k)] = k
    assert f.min() > 0
    again = net(mx.np.array([4.0]))[0].asnumpy()
    assert not onp.allclose(beta, again)


def test_npx_random_bernoulli_and_batched_samplers():
    mx.random.seed(0)
    p = mx.npx.random.bernoulli(prob=mx.np.array([0.0, 1.0, 0.3]), size=(2000, 3)).asnumpy()
    assert set(onp.unique(p)) <= {0.0, 1.0}
    onp.testing.assert_allclose(p.mean(axis=0), [0, 1, 0.3], atol=0.04)
    q = mx.npx.random.bernoulli(logit=0.0, size=(2000,)).asnumpy()
    assert q.mean() == pytest.approx(0.5, abs=0.05)
    for bad in ({}, {"prob": 0.5, "logit": 0.5}, {"prob": 1.5},
                {"prob": mx.np.array([-0.1])}):
        with pytest.raises(ValueError):
            mx.npx.random.bernoulli(**bad)
    lo, hi = mx.np.zeros((2, 1)), mx.np.ones((1, 3))
    assert mx.npx.random.uniform_n(lo, hi, batch_shape=(4,)).shape == (4, 2, 3)
    assert mx.npx.random.normal_n(0.0, 1.0, batch_shape=5).shape == (5,)
    mx.npx.random.seed(11)
    a = mx.np.random.uniform(size=3).asnumpy()
    mx.npx.random.seed(11)
    assert (mx.np.random.uniform(size=3).asnumpy() == a).all()
