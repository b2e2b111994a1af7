"""Float formulas on integer data, as MXNet 2.0 computes them.

MXNet evaluates sigmoid, reciprocal, smooth_l1, … in the input's own dtype: the float result is
truncated toward zero into the integer output. Ops written for floating-point data only (its
REAL type switch: BatchNorm, RNN, the box ops, …) refuse integer data.
"""
from __future__ import annotations

import numpy as np
import pytest

from framework import sym
from framework.base import OperatorError
from framework.ops.registry import get_op


def run(name: str, *inputs, **attrs):
    op = get_op(name)
    return op.kernel(op.parse_attrs(attrs), *inputs)


def i32(*values):
    return np.array(values, np.int32)


@pytest.mark.parametrize("name, x, expected", [
    ("_npi_reciprocal", i32(1, 2, -1, 4), i32(1, 0, -1, 0)),
    ("mish", i32(-1, 0, 3, 5), i32(0, 0, 2, 4)),              # 2.986…, 4.999…
    ("log_sigmoid", i32(-3, 0, 3), i32(-3, 0, 0)),            # -3.048…, -0.693…, -0.048…
    ("softsign", i32(-4, 0, 9), i32(0, 0, 0)),                # ±0.8, 0.9: below one
    ("sigmoid", i32(-3, 0, 3), i32(0, 0, 0)),
    ("smooth_l1", i32(-3, 0, 3), i32(2, 0, 2)),               # |x| - 0.5
])
def test_float_math_on_integers_is_truncated_into_the_input_dtype(name, x, expected):
    out = run(name, x)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, expected)


def test_an_out_buffer_receives_the_truncated_integers():
    out = np.full(3, 99, np.int32)
    got = get_op("_npx_sigmoid").kernel({}, i32(-9, 0, 40), out=out)
    assert got is out
    np.testing.assert_array_equal(out, i32(0, 0, 1))


def test_div_sqrt_dim_divides_integers_by_the_truncated_root():
    x = np.array([[7, -7, 4, 1, 0]], np.int32)                # sqrt(5) → 2, C division
    np.testing.assert_array_equal(run("_contrib_div_sqrt_dim", x), [[3, -3, 2, 0, 0]])


def test_image_normalize_keeps_the_integer_dtype():
    x = np.array([[[3, 8]]], np.int32)                        # (C=1, H=1, W=2)
    out = run("_image_normalize", x, mean=(1.0,), std=(2.0,))
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, [[[1, 3]]])            # 1.0, 3.5


def test_float_inputs_are_unchanged():
    x = np.array([-1.5, 0.0, 2.0], np.float32)
    np.testing.assert_allclose(run("sigmoid", x), 1 / (1 + np.exp(-x)), rtol=1e-6)
    np.testing.assert_allclose(run("_npi_reciprocal", x[[0, 2]]), [-2 / 3, 0.5], rtol=1e-6)


@pytest.mark.parametrize("name, inputs", [
    ("BatchNorm", [np.ones((1, 2, 2, 2), np.int32)] + [np.ones(2, np.float32)] * 4),
    ("_contrib_box_iou", [np.ones((2, 4), np.int64), np.ones((2, 4), np.int64)]),
    ("masked_softmax", [np.ones((2, 3), np.uint8), np.ones((2, 3), bool)]),
])
def test_float_only_ops_refuse_integer_data_by_name(name, inputs):
    op = get_op(name)
    with pytest.raises(OperatorError, match=f"{name}: takes floating-point data only, got"):
        op.kernel(op.parse_attrs({}), *inputs)
    with pytest.raises(OperatorError, match=name):
        op.dtypes(op.parse_attrs({}), [x.dtype for x in inputs])


def test_type_inference_names_the_node_that_refuses_integer_data():
    net = sym.BatchNorm(sym.var("data"), name="bn7")
    with pytest.raises(OperatorError, match="node bn7: operator BatchNorm: takes floating-point"):
        net.infer_type(data=np.int32)
    assert net.infer_type(data=np.float32)[1] == [np.float32]
