"""Binary ops: broadcast/elemwise tensor ops, scalar ops, comparisons, dtype promotion, add_n."""
import numpy as np
import pytest

from framework.ops import OpGroup, get_op
from _helpers import close, rnd, run_op

A = rnd(2, 3, 4, seed=1)
B = rnd(1, 3, 1, seed=2)
PB = rnd(1, 3, 1, seed=3, low=0.5, high=2.0)
PA = rnd(2, 3, 4, seed=4, low=0.5, high=2.0)

TENSOR = [
    ("_npi_add", np.add, A, B), ("broadcast_add", np.add, A, B), ("elemwise_add", np.add, A, A),
    ("_npi_subtract", np.subtract, A, B), ("broadcast_sub", np.subtract, A, B),
    ("_npi_multiply", np.multiply, A, B), ("broadcast_mul", np.multiply, A, B),
    ("_npi_true_divide", np.divide, A, PB), ("broadcast_div", np.divide, A, PB),
    ("elemwise_div", np.divide, A, PA),
    ("_npi_power", np.power, PA, B), ("broadcast_power", np.power, PA, B),
    ("broadcast_maximum", np.maximum, A, B), ("_npi_maximum", np.maximum, A, B),
    ("broadcast_minimum", np.minimum, A, B), ("_maximum", np.maximum, A, A[::-1]),
    ("_npi_mod", np.mod, A, PB), ("_npi_hypot", np.hypot, A, B),
    ("_npi_arctan2", np.arctan2, A, B), ("_npi_floor_divide", np.floor_divide, A, PB),
    ("_npi_fmax", np.fmax, A, B), ("_npi_copysign", np.copysign, A, B),
]


@pytest.mark.parametrize("name,ref,x,y", TENSOR, ids=[t[0] for t in TENSOR])
def test_tensor_binary(name, ref, x, y):
    out = run_op(name, x, y)
    assert out.dtype == np.float32
    close(out, ref(x, y), rtol=1e-5, atol=1e-6)


def test_shared_computation_is_one_op():
    assert get_op("broadcast_add") is get_op("_npi_add")
    # MXNet 1.x's elemwise_add (alias _plus) is its own operator: its operands have one shape,
    # which lets the epilogue fusion take a residual add without knowing the shapes
    assert get_op("elemwise_add") is get_op("_plus") is not get_op("_npi_add")
    assert get_op("elemwise_add").name in OpGroup.SAME_SHAPE_OPERANDS & OpGroup.ADDS
    assert get_op("_npi_maximum") is get_op("broadcast_maximum")
    assert get_op("broadcast_maximum").name == "broadcast_maximum"   # what MXNet 2 records
    assert get_op("_npi_true_divide") is not get_op("broadcast_div")  # int semantics differ


def test_dtype_promotion():
    i32 = np.array([1, 2, 3], np.int32)
    f16 = np.array([1, 2, 3], np.float16)
    f32 = np.array([1, 2, 3], np.float32)
    assert run_op("_npi_add", i32, f32).dtype == np.float32     # float wins, keeps its width
    assert run_op("_npi_add", f16, f32).dtype == np.float32
    assert run_op("_npi_add", i32, f16).dtype == np.float16
    assert run_op("_npi_add", i32, np.array([1], np.int64)).dtype == np.int64
    assert run_op("_npi_true_divide", i32, i32).dtype == np.float32
    close(run_op("_npi_true_divide", i32, np.array([2], np.int32)), [0.5, 1, 1.5])
    # 1.x division of ints truncates toward zero and keeps the dtype
    np.testing.assert_array_equal(run_op("broadcast_div", np.array([-7, 7], np.int32),
                                         np.array([2], np.int32)), [-3, 3])


def test_mod_follows_divisor_sign_and_zero():
    x = np.array([-7.5, 7.5, 3.0], np.float32)
    close(run_op("_npi_mod", x, np.array([2.0, -2.0, 0.0], np.float32)), [0.5, -0.5, 0.0])


def test_comparisons_bool_vs_legacy():
    out = run_op("_npi_greater", A, B)
    assert out.dtype == np.bool_
    np.testing.assert_array_equal(out, A > B)
    legacy = run_op("broadcast_greater", A, B)
    assert legacy.dtype == np.float32
    np.testing.assert_array_equal(legacy, (A > B).astype(np.float32))
    for name, ref in [("_npi_equal", np.equal), ("_npi_not_equal", np.not_equal),
                      ("_npi_less", np.less), ("_npi_less_equal", np.less_equal),
                      ("_npi_greater_equal", np.greater_equal),
                      ("_npi_logical_and", np.logical_and), ("_npi_logical_or", np.logical_or),
                      ("_npi_logical_xor", np.logical_xor)]:
        np.testing.assert_array_equal(run_op(name, A, B), ref(A, B))
    for name, ref in [("_lesser", np.less), ("_equal", np.equal), ("broadcast_lesser_equal",
                                                                     np.less_equal)]:
        np.testing.assert_array_equal(run_op(name, A, A[::-1]), ref(A, A[::-1]))


SCALAR = [
    ("_npi_add_scalar", lambda x, s: x + s), ("_plus_scalar", lambda x, s: x + s),
    ("_npi_subtract_scalar", lambda x, s: x - s), ("_npi_rsubtract_scalar", lambda x, s: s - x),
    ("_rminus_scalar", lambda x, s: s - x), ("_npi_multiply_scalar", lambda x, s: x * s),
    ("_npi_true_divide_scalar", lambda x, s: x / s), ("_npi_rtrue_divide_scalar", lambda x, s: s / x),
    ("_div_scalar", lambda x, s: x / s), ("_rdiv_scalar", lambda x, s: s / x),
    ("_npi_power_scalar", lambda x, s: np.abs(x) ** s), ("_npi_rpower_scalar", lambda x, s: s ** x),
    ("_maximum_scalar", np.maximum), ("_minimum_scalar", np.minimum),
    ("_npi_mod_scalar", np.mod), ("_npi_rmod_scalar", lambda x, s: np.mod(s, x)),
    ("_hypot_scalar", np.hypot),
]


@pytest.mark.parametrize("name,ref", SCALAR, ids=[s[0] for s in SCALAR])
def test_scalar_ops(name, ref):
    x = np.abs(A) + 0.5 if "power_scalar" in name and not name.startswith("_npi_r") else A
    if name == "_npi_power_scalar":
        x = np.abs(A) + 0.5
        ref = np.power
    out = run_op(name, x, scalar=1.5, is_int=False)
    assert out.dtype == np.float32
    close(out, ref(x.astype(np.float64), 1.5), rtol=1e-5, atol=1e-5)


def test_scalar_attr_spelling_matches_mxnet2():
    op = get_op("_npi_add_scalar")
    assert op.format_attrs(op.parse_attrs({"scalar": 2.0, "is_int": False})) == \
        {"is_int": "0", "scalar": "2"}
    assert op.format_attrs(op.parse_attrs({"scalar": 0.1, "is_int": False}))["scalar"] == \
        "0.10000000000000001"
    # 1.x files: only `scalar`, e.g. "1.0"
    assert op.parse_attrs({"scalar": "1.0"}).scalar == 1.0


def test_scalar_dtype_rules_mxnet2():
    i = np.array([1, 2], np.int32)
    r = run_op("_npi_add_scalar", i, scalar=1.5, is_int=False)
    assert r.dtype == np.float64 and list(r) == [2.5, 3.5]        # as MXNet 2.0.0b1
    assert run_op("_npi_multiply_scalar", i, scalar=2, is_int=True).dtype == np.int32
    assert run_op("_npi_true_divide_scalar", i, scalar=2, is_int=True).dtype == np.float32
    b = np.array([True, False])
    assert run_op("_npi_add_scalar", b, scalar=1, is_int=True).dtype == np.int64
    # 1.x files carry no is_int: defaults to True → computed in the input dtype
    assert run_op("_mul_scalar", A, scalar=3.0).dtype == np.float32


def test_scalar_comparisons():
    r = run_op("_npi_greater_scalar", A, scalar=0.0, is_int=False)
    assert r.dtype == np.bool_
    np.testing.assert_array_equal(r, A > 0)
    legacy = run_op("_greater_scalar", A, scalar=0.0)
    assert legacy.dtype == np.float32
    np.testing.assert_array_equal(legacy, (A > 0).astype(np.float32))
    for name, ref in [("_lesser_equal_scalar", np.less_equal), ("_equal_scalar", np.equal),
                      ("_not_equal_scalar", np.not_equal), ("_npi_less_scalar", np.less),
                      ("_greater_equal_scalar", np.greater_equal)]:
        np.testing.assert_array_equal(run_op(name, A, scalar=0.5), ref(A, np.float32(0.5)))
    assert get_op("_GreaterEqualScalar") is get_op("_greater_equal_scalar")


def test_add_n():
    out = run_op("add_n", A, A * 2, A * 3, num_args=3)
    close(out, A * 6)
    assert get_op("ElementWiseSum") is get_op("add_n")
    op = get_op("add_n")
    assert op.input_names(op.parse_attrs({"num_args": 2})) == ["arg0", "arg1"]


def test_out_buffer_binary():
    op = get_op("_npi_add")
    buf = np.empty_like(A)
    r = op.kernel(op.parse_attrs({}), A, B, out=buf)
    assert r is buf
    close(buf, A + B)
    op = get_op("_npi_multiply_scalar")
    r = op.kernel(op.parse_attrs({"scalar": 2.0, "is_int": False}), A, out=buf)
    close(buf, A * 2)


def test_broadcast_error_message():
    with pytest.raises(Exception, match="broadcast"):
        run_op("_npi_add", np.zeros((2, 3), np.float32), np.zeros((4,), np.float32))
