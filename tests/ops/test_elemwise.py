"""Unary element-wise ops: kernels vs NumPy, MXNet rounding rules, dtype rules, names."""
import math

import numpy as np
import pytest

from framework.ops import get_op, has_op
from _helpers import close, rnd, run_op

X = rnd(3, 4, 5)
P = rnd(3, 4, 5, low=0.2, high=3.0)
U = rnd(3, 4, 5, low=-0.9, high=0.9)

FLOAT_CASES = [
    ("exp", X, np.exp), ("expm1", X, np.expm1), ("log", P, np.log), ("log1p", P, np.log1p),
    ("log2", P, np.log2), ("log10", P, np.log10), ("sqrt", P, np.sqrt),
    ("rsqrt", P, lambda v: 1 / np.sqrt(v)), ("cbrt", X, np.cbrt),
    ("rcbrt", P, lambda v: 1 / np.cbrt(v)), ("sin", X, np.sin), ("cos", X, np.cos),
    ("tan", U, np.tan), ("arcsin", U, np.arcsin), ("arccos", U, np.arccos),
    ("arctan", X, np.arctan), ("sinh", X, np.sinh), ("cosh", X, np.cosh), ("tanh", X, np.tanh),
    ("arcsinh", X, np.arcsinh), ("arccosh", P + 1, np.arccosh), ("arctanh", U, np.arctanh),
    ("degrees", X, np.degrees), ("radians", X, np.radians),
    ("erf", X, np.vectorize(math.erf)), ("gammaln", P, np.vectorize(math.lgamma)),
    ("gamma", P, np.vectorize(math.gamma)),
]


@pytest.mark.parametrize("name,x,ref", FLOAT_CASES, ids=[c[0] for c in FLOAT_CASES])
def test_float_unary(name, x, ref):
    out = run_op(name, x)
    assert out.dtype == np.float32
    close(out, ref(x.astype(np.float64)), rtol=1e-4, atol=1e-5)


KEEP_CASES = [("abs", np.abs), ("negative", np.negative), ("sign", np.sign),
              ("square", np.square), ("reciprocal", lambda v: 1 / v), ("floor", np.floor),
              ("ceil", np.ceil), ("trunc", np.trunc), ("fix", np.fix)]


@pytest.mark.parametrize("name,ref", KEEP_CASES, ids=[c[0] for c in KEEP_CASES])
def test_keep_dtype_unary(name, ref):
    close(run_op(name, X), ref(X))


def test_npi_names_are_canonical_for_tracing():
    # MXNet 2.x records np.exp(a) as `_npi_exp`; 1.x graphs name the same computation `exp`
    for legacy, npi in [("exp", "_npi_exp"), ("abs", "_npi_absolute"), ("tanh", "_npi_tanh"),
                        ("negative", "_npi_negative"), ("floor", "_npi_floor"),
                        ("reciprocal", "_npi_reciprocal"), ("sign", "_npi_sign")]:
        assert get_op(legacy) is get_op(npi)
        assert get_op(legacy).name == npi


def test_rint_is_mxnet_half_down():
    x = np.array([0.5, 1.5, 2.5, 3.5, -0.5, -1.5, -2.5, 2.4, -2.6], np.float32)
    # MXNet: floor if (x - floor) <= (ceil - x) else ceil
    close(run_op("rint", x), [0, 1, 2, 3, -1, -2, -3, 2, -3])
    close(run_op("_npi_rint", x), [0, 1, 2, 3, -1, -2, -3, 2, -3])


def test_round_half_away_from_zero():
    x = np.array([0.5, 1.5, 2.5, -0.5, -2.5, 2.4, -2.6], np.float32)
    close(run_op("round", x), [1, 2, 3, -1, -3, 2, -3])


def test_np_around_half_to_even_and_decimals():
    x = np.array([0.5, 1.5, 2.5, -2.5, 1.234], np.float32)
    close(run_op("_npi_around", x), [0, 2, 2, -2, 1])
    close(run_op("_npi_around", x, decimals=2), np.around(x, 2))


def test_integer_input_dtype_rules():
    i = np.array([[1, 2], [3, 4]], np.int32)
    assert run_op("_npi_exp", i).dtype == np.float32          # transcendental → float32
    assert run_op("_npi_sqrt", i).dtype == np.float32
    assert run_op("_npi_absolute", -i).dtype == np.int32     # abs keeps int
    assert run_op("_npi_square", i).dtype == np.int32
    assert run_op("_npi_floor", i).dtype == np.int32
    np.testing.assert_array_equal(run_op("_npi_floor", i), i)


def test_float16_and_float64_preserved():
    for dt in (np.float16, np.float64):
        x = X.astype(dt)
        assert run_op("_npi_exp", x).dtype == dt
        assert run_op("_npi_negative", x).dtype == dt


def test_predicates_and_logical():
    x = np.array([1.0, np.nan, np.inf, -np.inf, 0.0], np.float32)
    np.testing.assert_array_equal(run_op("_npi_isnan", x), np.isnan(x))
    np.testing.assert_array_equal(run_op("_npi_isinf", x), np.isinf(x))
    np.testing.assert_array_equal(run_op("_npi_isfinite", x), np.isfinite(x))
    np.testing.assert_array_equal(run_op("_npi_logical_not", x), np.logical_not(x))
    legacy = run_op("logical_not", x)
    assert legacy.dtype == np.float32
    np.testing.assert_array_equal(legacy, [0, 0, 0, 0, 1])
    np.testing.assert_array_equal(run_op("_npi_bitwise_not", np.array([0, 5], np.int32)), [-1, -6])


def test_zero_dim_returns_ndarray():
    out = run_op("_npi_exp", np.array(1.0, np.float32))
    assert isinstance(out, np.ndarray) and out.shape == ()


def test_out_buffer():
    op = get_op("_npi_exp")
    buf = np.empty_like(X)
    r = op.kernel(op.parse_attrs({}), X, out=buf)
    assert r is buf
    close(buf, np.exp(X))


def test_erfinv_roundtrip():
    y = np.linspace(-0.99, 0.99, 41).astype(np.float32)
    close(run_op("erf", run_op("erfinv", y)), y, atol=2e-5)


def test_all_unary_registered():
    for n in ["exp", "_npi_exp", "log", "_npi_log", "rsqrt", "cbrt", "_npi_cbrt", "erf",
              "gammaln", "rint", "_npi_rint", "fix", "_npi_fix", "round", "_npi_around",
              "arcsinh", "_npi_arctanh", "degrees", "radians", "_npi_isnan"]:
        assert has_op(n), n
