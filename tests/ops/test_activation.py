"""Activation, relu/sigmoid, softsign, hard_sigmoid, log_sigmoid, mish, LeakyReLU."""
import math

import numpy as np
import pytest

from nn_testutil import ATOL, RTOL, check_fixture, rand, run_op


@pytest.fixture
def x():
    rng = np.random.default_rng(0)
    v = rand(rng, 2, 3, 4, 5) * 4
    v.flat[:4] = [0.0, 25.0, -30.0, 21.0]      # softrelu threshold, large magnitudes
    return v


def _ref(f, x):
    return np.vectorize(f, otypes=[np.float64])(x.astype(np.float64))


def _sig(v):
    return 1 / (1 + math.exp(-v)) if v > -700 else 0.0


REFS = {
    "relu": lambda v: max(v, 0.0),
    "sigmoid": _sig,
    "tanh": math.tanh,
    "softrelu": lambda v: v if v > 20 else math.log1p(math.exp(v)),
    "softsign": lambda v: v / (1 + abs(v)),
    "log_sigmoid": lambda v: -math.log1p(math.exp(-v)) if v > -30 else v - math.log1p(math.exp(v)),
    "mish": lambda v: v * math.tanh(v if v > 20 else math.log1p(math.exp(v))),
}


@pytest.mark.parametrize("act", sorted(REFS))
def test_activation_types(x, act):
    (y,) = run_op("Activation", {"act_type": act}, x)
    assert y.dtype == np.float32
    np.testing.assert_allclose(y, _ref(REFS[act], x), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("name,act", [("relu", "relu"), ("_npx_relu", "relu"),
                                      ("sigmoid", "sigmoid"), ("_npx_sigmoid", "sigmoid"),
                                      ("softsign", "softsign"), ("log_sigmoid", "log_sigmoid"),
                                      ("mish", "mish")])
def test_unary_ops(x, name, act):
    (y,) = run_op(name, {}, x)
    np.testing.assert_allclose(y, _ref(REFS[act], x), rtol=RTOL, atol=ATOL)


def test_relu_keeps_nan_and_out_buffer():
    from framework.ops.registry import get_op
    v = np.array([np.nan, -1.0, 2.0], np.float32)
    (y,) = run_op("relu", {}, v)
    assert np.isnan(y[0]) and y[1] == 0 and y[2] == 2
    op = get_op("Activation")
    out = np.empty(3, np.float32)
    r = op.kernel(op.parse_attrs({"act_type": "sigmoid"}), np.zeros(3, np.float32), out=out)
    assert r is out and np.all(out == 0.5)


def test_hard_sigmoid(x):
    (y,) = run_op("hard_sigmoid", {"alpha": "0.25", "beta": "0.4"}, x)
    np.testing.assert_allclose(y, np.clip(0.25 * x + 0.4, 0, 1), rtol=RTOL, atol=ATOL)
    (y,) = run_op("hard_sigmoid", {}, x)
    np.testing.assert_allclose(y, np.clip(0.2 * x + 0.5, 0, 1), rtol=RTOL, atol=ATOL)


SELU_L, SELU_A = 1.0507009873554805, 1.6732632423543772


@pytest.mark.parametrize("attrs,f", [
    ({"act_type": "leaky", "slope": "0.1"}, lambda v: v if v > 0 else 0.1 * v),
    ({}, lambda v: v if v > 0 else 0.25 * v),
    ({"act_type": "elu", "slope": "0.5"}, lambda v: v if v > 0 else 0.5 * math.expm1(v)),
    ({"act_type": "selu"}, lambda v: SELU_L * (v if v > 0 else SELU_A * math.expm1(v))),
    ({"act_type": "gelu"}, lambda v: 0.5 * v * (1 + math.erf(v / math.sqrt(2)))),
    ({"act_type": "gelu_tanh"}, lambda v: 0.5 * v * (1 + math.tanh(
        math.sqrt(2 / math.pi) * (v + 0.044715 * v ** 3)))),
])
def test_leaky_relu(x, attrs, f):
    (y,) = run_op("LeakyReLU", attrs, x)
    np.testing.assert_allclose(y, _ref(f, x), rtol=RTOL, atol=ATOL)


def test_leaky_relu_rrelu_inference(x):
    y, mask = run_op("LeakyReLU", {"act_type": "rrelu", "lower_bound": "0.1",
                                   "upper_bound": "0.3"}, x)
    np.testing.assert_allclose(y, np.where(x > 0, x, 0.2 * x), rtol=RTOL, atol=ATOL)
    assert mask.shape == x.shape
    from framework.ops.registry import get_op
    op = get_op("LeakyReLU")
    a = op.parse_attrs({"act_type": "rrelu"})
    assert op.n_outputs(a) == 2 and op.n_visible(a) == 2          # both visible, as MXNet
    assert [op.output_name(a, i) for i in range(2)] == ["output", "mask"]


def test_prelu(x):
    rng = np.random.default_rng(1)
    g = rand(rng, 3, lo=0.05, hi=0.3)
    y, = run_op("LeakyReLU", {"act_type": "prelu"}, x, g)
    np.testing.assert_allclose(y, np.where(x > 0, x, x * g.reshape(1, 3, 1, 1)), rtol=RTOL)
    y, = run_op("LeakyReLU", {"act_type": "prelu"}, x, np.array([0.25], np.float32))
    np.testing.assert_allclose(y, np.where(x > 0, x, 0.25 * x), rtol=RTOL)
    from framework.ops.registry import get_op
    op = get_op("LeakyReLU")
    a = op.parse_attrs({"act_type": "prelu"})
    assert op.input_names(a) == ["data", "gamma"]
    assert op.infer_param_shapes(a, [x.shape, None]) == [x.shape, (3,)]


def test_strict_attrs():
    from framework.base import OperatorError
    from framework.ops.registry import get_op
    with pytest.raises(OperatorError):
        get_op("Activation").parse_attrs({"act_type": "relu", "bogus": "1"})
    with pytest.raises(OperatorError):
        get_op("Activation").parse_attrs({"act_type": "swish"})


def test_float_attr_formatting():
    from framework.ops.registry import get_op
    op = get_op("LeakyReLU")
    a = op.parse_attrs({"act_type": "elu", "slope": 0.7})
    assert op.format_attrs(a) == {"act_type": "elu", "lower_bound": "0.125", "slope": "0.7",
                                  "upper_bound": "0.334"}


@pytest.mark.parametrize("version,name", [("mxnet-1.9.1", "activations"),
                                          ("mxnet-1.9.1", "leakyrelu_variants"),
                                          ("mxnet-2.0.0b1", "activations_2")])
def test_fixture(version, name):
    check_fixture(version, name)
