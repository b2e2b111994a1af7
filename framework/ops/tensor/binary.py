"""Binary element-wise ops: broadcast/elemwise tensor-tensor ops and tensor-scalar ops.

Tensor-tensor: inputs `lhs`, `rhs`, NumPy broadcasting (the 1.x `elemwise_*` ops are the same
computation on equal shapes). Dtypes follow MXNet 2.x: a float operand wins over an int one,
`true_divide` of integers gives float32 (float64 under `npx.set_np(dtype=True)`, as MXNet). Comparisons / logical ops give bool for `_npi_*` and
1/0 in the input dtype for the 1.x names.

Tensor-scalar: attrs `scalar` (double) and `is_int` (2.x; absent in 1.x files, default True).
An integer array with a non-integer scalar computes in float32, as in MXNet 2.x.
"""
from __future__ import annotations

import numpy as np

from ..._np_state import is_np_default_dtype
from ..common import (BOOL, F32, F64, I64, ScalarAttr, bshape, is_float, result_dtype,
                      same_shape)
from ..attrs import Bool, Int
from ..lowering import Unsupported, lowers_named
from ..registry import expose, register


def _ret(r):
    return r if type(r) is np.ndarray else np.asarray(r)


def _bin_shape(a, s):
    return [bshape("broadcast", s[0], s[1])]


def _arith_type(a, d):
    return [result_dtype(d[0], d[1])]


def _int_div() -> np.dtype:
    """The dtype of an integer division: MXNet's default float."""
    return F64 if is_np_default_dtype() else F32


def _div_type(a, d):
    dt = result_dtype(d[0], d[1])
    return [dt if is_float(dt) else _int_div()]


def _bool_type(a, d):
    return [BOOL]


def _legacy_cmp_type(a, d):
    return [result_dtype(d[0], d[1])]


def _mod(x, y):
    r = np.mod(x, y)
    if is_float(r.dtype) and r.size and not np.all(y):
        r = np.where(y == 0, r.dtype.type(0), r)
    return r


def _fmod(x, y):
    r = np.fmod(x, y)
    if is_float(r.dtype) and r.size and not np.all(y):
        r = np.where(y == 0, r.dtype.type(0), r)
    return r


def _floor_divide(x, y):
    return np.floor_divide(x, y)


def _power(x, y):
    if not is_float(x.dtype) and np.any(y < 0):
        return np.power(x.astype(np.float64), y).astype(x.dtype)
    return np.power(x, y)


def _ldexp(x, y):
    return (x * np.power(2.0, y)).astype(x.dtype)


_UFUNC_OUT = {np.add, np.subtract, np.multiply, np.divide, np.maximum, np.minimum, np.hypot,
              np.arctan2, np.copysign, np.fmax, np.fmin, np.logaddexp}


def _arith_kernel(fn, div=False, cast_int_float=False):
    takes_out = fn in _UFUNC_OUT

    def kernel(a, x, y, out=None):
        dt = x.dtype if x.dtype == y.dtype else result_dtype(x.dtype, y.dtype)
        if (div or cast_int_float) and not is_float(dt):
            dt = _int_div() if div else F32
        if x.dtype != dt:
            x = x.astype(dt)
        if y.dtype != dt:
            y = y.astype(dt)
        try:
            with np.errstate(all="ignore"):
                if out is not None:
                    if takes_out and out.dtype == dt:
                        fn(x, y, out=out)
                    else:
                        out[...] = fn(x, y)
                    return out
                return _ret(fn(x, y))
        except ValueError:
            bshape("broadcast", x.shape, y.shape)
            raise
    return kernel


# canonical name, aliases, fn, integer→float
_ARITH = [
    ("_npi_add", ("broadcast_add", "broadcast_plus", "_grad_add"), np.add, False),
    # MXNet 1.x's elemwise_add is its own operator: its operands always have one shape
    ("elemwise_add", ("_add", "_plus", "_Plus"), np.add, False),
    ("_npi_subtract", ("broadcast_sub", "broadcast_minus", "elemwise_sub", "_sub", "_minus",
                       "_Minus"), np.subtract, False),
    ("_npi_multiply", ("broadcast_mul", "elemwise_mul", "_mul", "_Mul"), np.multiply, False),
    ("_npi_power", ("broadcast_power", "_power", "_Power"), _power, False),
    # np.maximum / np.minimum record the 1.x names in MXNet 2.x
    ("broadcast_maximum", ("_npi_maximum", "_maximum", "_Maximum"), np.maximum, False),
    ("broadcast_minimum", ("_npi_minimum", "_minimum", "_Minimum"), np.minimum, False),
    ("_npi_mod", ("broadcast_mod", "_mod", "_Mod"), _mod, False),
    ("_npi_fmod", (), _fmod, False),
    ("_npi_floor_divide", (), _floor_divide, False),
    ("_npi_hypot", ("broadcast_hypot", "_hypot", "_Hypot"), np.hypot, True),
    ("_npi_arctan2", (), np.arctan2, True),
    ("_npi_copysign", (), np.copysign, True),
    ("_npi_fmax", (), np.fmax, False),
    ("_npi_fmin", (), np.fmin, False),
    ("_npi_logaddexp", (), np.logaddexp, True),
    ("_npi_ldexp", (), _ldexp, True),
    ("_npi_lcm", (), np.lcm, False),
    ("_npi_gcd", (), np.gcd, False),
    ("_npi_bitwise_and", (), np.bitwise_and, False),
    ("_npi_bitwise_or", (), np.bitwise_or, False),
    ("_npi_bitwise_xor", (), np.bitwise_xor, False),
    ("_npi_left_shift", (), np.left_shift, False),
    ("_npi_right_shift", (), np.right_shift, False),
]

for _name, _aliases, _fn, _tofloat in _ARITH:
    register(_name, *_aliases, inputs=("lhs", "rhs"), infer_shape=_bin_shape,
             infer_type=_div_type if _tofloat else _arith_type,
             out=True, elementwise=True,
             quantized_as="_contrib_quantized_elemwise_add" if _name == "elemwise_add" else None,
             )(_arith_kernel(_fn, cast_int_float=_tofloat))

register("_npi_true_divide", inputs=("lhs", "rhs"), infer_shape=_bin_shape,
         infer_type=_div_type, out=True, elementwise=True,
         legacy="broadcast_div")(_arith_kernel(np.divide, div=True))


def _legacy_div(x, y):
    if is_float(x.dtype):
        return np.divide(x, y)
    with np.errstate(all="ignore"):   # C-style integer division (truncation)
        q = np.trunc(np.divide(x, y))
    return q.astype(x.dtype)


register("broadcast_div", "elemwise_div", "_div", "_Div", inputs=("lhs", "rhs"),
         infer_shape=_bin_shape, infer_type=_arith_type, out=True,
         elementwise=True)(_arith_kernel(_legacy_div))


# -- comparisons and logical ops -------------------------------------------------------------
_CMP = [
    ("equal", np.equal, ("broadcast_equal", "_equal", "_Equal")),
    ("not_equal", np.not_equal, ("broadcast_not_equal", "_not_equal", "_Not_Equal")),
    ("greater", np.greater, ("broadcast_greater", "_greater", "_Greater")),
    ("greater_equal", np.greater_equal, ("broadcast_greater_equal", "_greater_equal",
                                         "_Greater_Equal")),
    ("less", np.less, ("broadcast_lesser", "_lesser", "_Lesser")),
    ("less_equal", np.less_equal, ("broadcast_lesser_equal", "_lesser_equal", "_Lesser_Equal")),
    ("logical_and", np.logical_and, ("broadcast_logical_and", "_logical_and", "_Logical_And")),
    ("logical_or", np.logical_or, ("broadcast_logical_or", "_logical_or", "_Logical_Or")),
    ("logical_xor", np.logical_xor, ("broadcast_logical_xor", "_logical_xor", "_Logical_Xor")),
]


def _cmp_kernel(fn, legacy):
    def kernel(a, x, y):
        if x.dtype != y.dtype:
            dt = result_dtype(x.dtype, y.dtype)
            x, y = x.astype(dt), y.astype(dt)
        try:
            r = fn(x, y)
        except ValueError:
            bshape("broadcast", x.shape, y.shape)
            raise
        if legacy:
            return _ret(r.astype(result_dtype(x.dtype, y.dtype)))
        return _ret(r)
    return kernel


for _base, _fn, _legacy in _CMP:
    register(f"_npi_{_base}", inputs=("lhs", "rhs"), infer_shape=_bin_shape,
             infer_type=_bool_type, elementwise=True, legacy=_legacy[0])(_cmp_kernel(_fn, False))
    register(_legacy[0], *_legacy[1:], inputs=("lhs", "rhs"), infer_shape=_bin_shape,
             infer_type=_legacy_cmp_type, elementwise=True)(_cmp_kernel(_fn, True))


# -- tensor ∘ scalar --------------------------------------------------------------------------
_SCALAR_ATTRS = {"scalar": ScalarAttr(1.0), "is_int": Bool(True)}


def _scalar_dtype(a, dt, div=False):
    """MXNet 2.x: int array ∘ float scalar → float64, bool ∘ int → int64, true_divide → float32."""
    if not is_float(dt):
        if div:
            return _int_div()
        if not a.is_int:
            return F64
        if dt == BOOL:
            return I64
    return dt


def _scalar_kernel(fn, reflected=False, div=False):
    takes_out = fn in _UFUNC_OUT

    def kernel(a, x, out=None):
        dt = _scalar_dtype(a, x.dtype, div)
        if x.dtype != dt:
            x = x.astype(dt)
        s = np.asarray(float(a.scalar) if is_float(dt) else int(a.scalar), dtype=dt)
        with np.errstate(all="ignore"):
            if out is not None and takes_out and out.dtype == dt:
                if reflected:
                    fn(s, x, out=out)
                else:
                    fn(x, s, out=out)
                return out
            r = fn(s, x) if reflected else fn(x, s)
            if out is not None:
                out[...] = r
                return out
            return _ret(r)
    return kernel


def _scalar_type(div=False):
    def infer(a, d):
        return [_scalar_dtype(a, d[0], div)]
    return infer


# 2.x-only names and the 1.x operator (same computation on float data) the 1.x writer uses
_LEGACY_SCALAR = {"_npi_true_divide_scalar": "_div_scalar",
                  "_npi_rtrue_divide_scalar": "_rdiv_scalar"}
# canonical, aliases, fn, reflected, int→float
_SCALAR = [
    ("_npi_add_scalar", ("_plus_scalar", "_PlusScalar"), np.add, False, False),
    ("_npi_subtract_scalar", ("_minus_scalar", "_MinusScalar"), np.subtract, False, False),
    ("_npi_rsubtract_scalar", ("_rminus_scalar", "_RMinusScalar"), np.subtract, True, False),
    ("_npi_multiply_scalar", ("_mul_scalar", "_MulScalar"), np.multiply, False, False),
    ("_div_scalar", ("_DivScalar",), _legacy_div, False, False),
    ("_rdiv_scalar", ("_RDivScalar",), _legacy_div, True, False),
    ("_npi_true_divide_scalar", (), np.divide, False, True),
    ("_npi_rtrue_divide_scalar", (), np.divide, True, True),
    ("_npi_power_scalar", ("_power_scalar", "_PowerScalar"), _power, False, False),
    ("_npi_rpower_scalar", ("_rpower_scalar", "_RPowerScalar"), _power, True, False),
    ("_npi_mod_scalar", ("_mod_scalar", "_ModScalar"), _mod, False, False),
    ("_npi_rmod_scalar", ("_rmod_scalar", "_RModScalar"), _mod, True, False),
    ("_npi_fmod_scalar", (), _fmod, False, False),
    ("_npi_rfmod_scalar", (), _fmod, True, False),
    ("_npi_floor_divide_scalar", (), _floor_divide, False, False),
    ("_npi_rfloor_divide_scalar", (), _floor_divide, True, False),
    ("_maximum_scalar", ("_npi_maximum_scalar", "_MaximumScalar"), np.maximum, False, False),
    ("_minimum_scalar", ("_npi_minimum_scalar", "_MinimumScalar"), np.minimum, False, False),
    ("_npi_fmax_scalar", (), np.fmax, False, False),
    ("_npi_fmin_scalar", (), np.fmin, False, False),
    ("_hypot_scalar", ("_npi_hypot_scalar", "_HypotScalar"), np.hypot, False, True),
    ("_npi_arctan2_scalar", (), np.arctan2, False, True),
    ("_npi_rarctan2_scalar", (), np.arctan2, True, True),
    ("_npi_logaddexp_scalar", (), np.logaddexp, False, True),
    ("_npi_copysign_scalar", (), np.copysign, False, True),
    ("_npi_rcopysign_scalar", (), np.copysign, True, True),
    ("_npi_ldexp_scalar", (), _ldexp, False, True),
    ("_npi_rldexp_scalar", (), lambda y, x: _ldexp(y, x), True, True),
    ("_npi_lcm_scalar", (), np.lcm, False, False),
    ("_npi_gcd_scalar", (), np.gcd, False, False),
    ("_npi_bitwise_and_scalar", (), np.bitwise_and, False, False),
    ("_npi_bitwise_or_scalar", (), np.bitwise_or, False, False),
    ("_npi_bitwise_xor_scalar", (), np.bitwise_xor, False, False),
    ("_npi_left_shift_scalar", (), np.left_shift, False, False),
    ("_npi_rleft_shift_scalar", (), np.left_shift, True, False),
    ("_npi_right_shift_scalar", (), np.right_shift, False, False),
    ("_npi_rright_shift_scalar", (), np.right_shift, True, False),
]

for _name, _aliases, _fn, _refl, _div in _SCALAR:
    register(_name, *_aliases, attrs=dict(_SCALAR_ATTRS), infer_shape=same_shape,
             infer_type=_scalar_type(_div or _name in ("_hypot_scalar",)),
             out=True, elementwise=True,
             legacy=_LEGACY_SCALAR.get(_name))(_scalar_kernel(_fn, _refl, _div))


def _cmp_scalar_kernel(fn, legacy):
    def kernel(a, x):
        dt = x.dtype
        if not is_float(dt) and not a.is_int:
            x = x.astype(F64)
        s = np.asarray(float(a.scalar) if is_float(x.dtype) else int(a.scalar), dtype=x.dtype)
        r = fn(x, s)
        return _ret(r.astype(dt) if legacy else r)
    return kernel


def _keep_type(a, d):
    return [d[0]]


for _base, _fn, _legacy in _CMP:
    _lname = _legacy[1] + "_scalar"
    register(f"_npi_{_base}_scalar", attrs=dict(_SCALAR_ATTRS), infer_shape=same_shape,
             infer_type=_bool_type, elementwise=True, legacy=_lname)(_cmp_scalar_kernel(_fn, False))
    _camel = "_" + _legacy[2][1:].replace("_", "") + "Scalar"
    register(_lname, _camel, attrs=dict(_SCALAR_ATTRS), infer_shape=same_shape,
             infer_type=_keep_type, elementwise=True)(_cmp_scalar_kernel(_fn, True))


# -- n-ary --------------------------------------------------------------------------------------
def _addn_inputs(a):
    return [f"arg{i}" for i in range(a.num_args)]


def _addn_shape(a, s):
    return [bshape("add_n", *s)]


@register("add_n", "ElementWiseSum", "_npi_add_n", attrs={"num_args": Int()},
          inputs=_addn_inputs, infer_shape=_addn_shape, out=True)
def add_n(a, *xs, out=None):
    """Sum of `num_args` arrays of the same shape."""
    if out is not None:
        np.copyto(out, xs[0])
    else:
        out = xs[0].copy() if xs[0].ndim else np.array(xs[0])
        if len(xs) > 1 and out.shape != bshape("add_n", *[x.shape for x in xs]):
            out = np.broadcast_to(out, bshape("add_n", *[x.shape for x in xs])).copy()
    for x in xs[1:]:
        np.add(out, x, out=out)
    return out


# -- ONNX lowering ------------------------------------------------------------------------------


def _float_mod_onnx(ctx, x, y, dt):
    """NumPy's floor modulo of floats, 0 where y == 0 (as the kernel): x - floor(x / y) * y."""
    r = ctx.op("Sub", [x, ctx.op("Mul", [ctx.op("Floor", [ctx.op("Div", [x, y])]), y])])
    zero = ctx.const(np.zeros((), dt))
    return ctx.op("Where", [ctx.op("Equal", [y, zero]), zero, r])


def _onnx_arith(ctx, kind: str, x: str, y: str, dt) -> str:
    if kind == "Mod":
        if not is_float(dt):
            return ctx.op("Mod", [x, y], fmod=0)
        return _float_mod_onnx(ctx, x, y, dt)
    if kind == "Hypot":
        return ctx.op("Sqrt", [ctx.op("Add", [ctx.op("Mul", [x, x]), ctx.op("Mul", [y, y])])])
    if kind == "Div" and not is_float(dt):
        raise Unsupported("integer division")
    return ctx.op(kind, [x, y])


def _arith_onnx(kind: str):
    def fn(ctx, node, ins):
        dt = ctx.out_dtype()
        x, y = (ctx.cast(v, dt) for v in ins)
        return _onnx_arith(ctx, kind, x, y, dt)
    return fn


def _scalar_onnx(kind: str, reflected: bool):
    def fn(ctx, node, ins):
        dt = ctx.out_dtype()
        x = ctx.cast(ins[0], dt)
        s = ctx.const(np.asarray(float(node.parsed.scalar) if is_float(dt)
                                 else int(node.parsed.scalar), dt), hint="scalar")
        return _onnx_arith(ctx, kind, *((s, x) if reflected else (x, s)), dt)
    return fn


def _cmp_onnx(kind: str, scalar: bool):
    def fn(ctx, node, ins):
        x = ins[0]
        if scalar:
            dt = ctx.dtype(x)
            y = ctx.const(np.asarray(float(node.parsed.scalar), dt), hint="scalar")
        else:
            dt = result_dtype(ctx.dtype(ins[0]), ctx.dtype(ins[1]))
            x, y = ctx.cast(ins[0], dt), ctx.cast(ins[1], dt)
        if kind.startswith("logical"):
            op = {"logical_and": "And", "logical_or": "Or", "logical_xor": "Xor"}[kind]
            r = ctx.op(op, [ctx.cast(x, BOOL), ctx.cast(y, BOOL)])
        elif kind == "not_equal":
            r = ctx.op("Not", [ctx.op("Equal", [x, y])])
        else:
            r = ctx.op({"equal": "Equal", "greater": "Greater", "greater_equal": "GreaterOrEqual",
                        "less": "Less", "less_equal": "LessOrEqual"}[kind], [x, y])
        out = ctx.out_dtype()
        return r if out == BOOL else ctx.op("Cast", [r], to=ctx.tensor_type(out))
    return fn


# the ONNX computation of each arithmetic op above (by canonical name)
_ONNX_ARITH = {"_npi_add": "Add", "elemwise_add": "Add", "_npi_subtract": "Sub", "_npi_multiply": "Mul",
               "_npi_power": "Pow", "broadcast_maximum": "Max", "broadcast_minimum": "Min",
               "_npi_mod": "Mod", "_npi_hypot": "Hypot", "_npi_true_divide": "Div",
               "broadcast_div": "Div", "_npi_fmax": "Max", "_npi_fmin": "Min"}
_ONNX_SCALAR = {"_npi_add_scalar": "Add", "_npi_subtract_scalar": "Sub",
                "_npi_rsubtract_scalar": "Sub", "_npi_multiply_scalar": "Mul",
                "_div_scalar": "Div", "_rdiv_scalar": "Div", "_npi_true_divide_scalar": "Div",
                "_npi_rtrue_divide_scalar": "Div", "_npi_power_scalar": "Pow",
                "_npi_rpower_scalar": "Pow", "_npi_mod_scalar": "Mod", "_npi_rmod_scalar": "Mod",
                "_maximum_scalar": "Max", "_minimum_scalar": "Min", "_hypot_scalar": "Hypot"}

for _name, _kind in _ONNX_ARITH.items():
    lowers_named(_name)(_arith_onnx(_kind))
for _name, _aliases, _fn, _refl, _div in _SCALAR:
    if _name in _ONNX_SCALAR:
        lowers_named(_name)(_scalar_onnx(_ONNX_SCALAR[_name], _refl))
for _base, _fn, _legacy in _CMP:
    lowers_named(f"_npi_{_base}", _legacy[0])(_cmp_onnx(_base, False))
    lowers_named(f"_npi_{_base}_scalar", _legacy[1] + "_scalar")(_cmp_onnx(_base, True))


@lowers_named("add_n")
def _add_n_onnx(ctx, node, ins):
    return ctx.op("Sum", ins) if len(ins) > 1 else ctx.op("Identity", ins)


def _fmod_onnx(ctx, x, y, dt):
    """C fmod (the sign of x), 0 where y == 0 for floats, as the kernel."""
    if not is_float(dt):
        return ctx.op("Mod", [x, y], fmod=1)
    r = ctx.op("Mod", [x, y], fmod=1)
    zero = ctx.const(np.zeros((), dt))
    return ctx.op("Where", [ctx.op("Equal", [y, zero]), zero, r])


def _floor_div_onnx(ctx, x, y, dt):
    if not is_float(dt):
        raise Unsupported("integer floor division")
    return ctx.op("Floor", [ctx.op("Div", [x, y])])


def _bitwise_onnx(kind):
    def build(ctx, x, y, dt):
        if is_float(dt):
            raise Unsupported(f"{kind} of floats")
        return ctx.op(kind if dt != BOOL else {"BitwiseAnd": "And", "BitwiseOr": "Or",
                                                "BitwiseXor": "Xor"}[kind], [x, y])
    return build


# ops whose ONNX form is more than one ONNX op of the same name: (ctx, x, y, dtype) -> value
_ONNX_BUILT = {"fmod": _fmod_onnx, "floor_divide": _floor_div_onnx,
               "bitwise_and": _bitwise_onnx("BitwiseAnd"), "bitwise_or": _bitwise_onnx("BitwiseOr"),
               "bitwise_xor": _bitwise_onnx("BitwiseXor")}


def _built_onnx(build, scalar: bool, reflected: bool):
    def fn(ctx, node, ins):
        dt = ctx.out_dtype()
        x = ctx.cast(ins[0], dt)
        if scalar:
            v = float(node.parsed.scalar) if is_float(dt) else int(node.parsed.scalar)
            y = ctx.const(np.asarray(v, dt), hint="scalar")
            x, y = (y, x) if reflected else (x, y)
        else:
            y = ctx.cast(ins[1], dt)
        return build(ctx, x, y, dt)
    return fn


for _base, _build in _ONNX_BUILT.items():
    lowers_named(f"_npi_{_base}")(_built_onnx(_build, False, False))
    lowers_named(f"_npi_{_base}_scalar")(_built_onnx(_build, True, False))
    if f"_npi_r{_base}_scalar" in {n for n, *_ in _SCALAR}:
        lowers_named(f"_npi_r{_base}_scalar")(_built_onnx(_build, True, True))
lowers_named("_npi_fmax_scalar")(_scalar_onnx("Max", False))
lowers_named("_npi_fmin_scalar")(_scalar_onnx("Min", False))


# -- front-ends: mxnet.numpy's binary ufuncs ----------------------------------------------------
# np.<name>: two arrays, array ∘ number, number ∘ array (a commutative op reuses its scalar op)
_NP_BINARY = {
    "add": ("_npi_add", "_npi_add_scalar", "_npi_add_scalar"),
    "subtract": ("_npi_subtract", "_npi_subtract_scalar", "_npi_rsubtract_scalar"),
    "multiply": ("_npi_multiply", "_npi_multiply_scalar", "_npi_multiply_scalar"),
    "true_divide": ("_npi_true_divide", "_npi_true_divide_scalar", "_npi_rtrue_divide_scalar"),
    "floor_divide": ("_npi_floor_divide", "_npi_floor_divide_scalar",
                     "_npi_rfloor_divide_scalar"),
    "power": ("_npi_power", "_npi_power_scalar", "_npi_rpower_scalar"),
    "mod": ("_npi_mod", "_npi_mod_scalar", "_npi_rmod_scalar"),
    "fmod": ("_npi_fmod", "_npi_fmod_scalar", "_npi_rfmod_scalar"),
    # MXNet 2.0 records np.maximum / np.minimum with the 1.x op names
    "maximum": ("broadcast_maximum", "_maximum_scalar", "_maximum_scalar"),
    "minimum": ("broadcast_minimum", "_minimum_scalar", "_minimum_scalar"),
    "fmax": ("_npi_fmax", "_npi_fmax_scalar", "_npi_fmax_scalar"),
    "fmin": ("_npi_fmin", "_npi_fmin_scalar", "_npi_fmin_scalar"),
    "logaddexp": ("_npi_logaddexp", "_npi_logaddexp_scalar", "_npi_logaddexp_scalar"),
    "hypot": ("_npi_hypot", "_hypot_scalar", "_hypot_scalar"),
    "arctan2": ("_npi_arctan2", "_npi_arctan2_scalar", "_npi_rarctan2_scalar"),
    "copysign": ("_npi_copysign", "_npi_copysign_scalar", "_npi_rcopysign_scalar"),
    "ldexp": ("_npi_ldexp", "_npi_ldexp_scalar", "_npi_rldexp_scalar"),
    "lcm": ("_npi_lcm", "_npi_lcm_scalar", "_npi_lcm_scalar"),
    "gcd": ("_npi_gcd", "_npi_gcd_scalar", "_npi_gcd_scalar"),
    "bitwise_and": ("_npi_bitwise_and", "_npi_bitwise_and_scalar", "_npi_bitwise_and_scalar"),
    "bitwise_or": ("_npi_bitwise_or", "_npi_bitwise_or_scalar", "_npi_bitwise_or_scalar"),
    "bitwise_xor": ("_npi_bitwise_xor", "_npi_bitwise_xor_scalar", "_npi_bitwise_xor_scalar"),
    "left_shift": ("_npi_left_shift", "_npi_left_shift_scalar", "_npi_rleft_shift_scalar"),
    "right_shift": ("_npi_right_shift", "_npi_right_shift_scalar", "_npi_rright_shift_scalar"),
    "logical_and": ("_npi_logical_and", "_npi_logical_and_scalar", "_npi_logical_and_scalar"),
    "logical_or": ("_npi_logical_or", "_npi_logical_or_scalar", "_npi_logical_or_scalar"),
    "logical_xor": ("_npi_logical_xor", "_npi_logical_xor_scalar", "_npi_logical_xor_scalar"),
}
# comparisons: a number on the left compares the array the other way (2 < x is x > 2)
_NP_COMPARE = {"equal": "equal", "not_equal": "not_equal", "greater": "less",
               "greater_equal": "less_equal", "less": "greater", "less_equal": "greater_equal"}


def _expose_np_binary() -> None:
    for fn, (arr, sca, rsca) in _NP_BINARY.items():
        expose(arr, f"np.{fn}:binary")
        expose(sca, f"np.{fn}:scalar")
        expose(rsca, f"np.{fn}:rscalar")
    for fn, swapped in _NP_COMPARE.items():
        expose(f"_npi_{fn}", f"np.{fn}:compare")
        expose(f"_npi_{fn}_scalar", f"np.{fn}:scalar")
        expose(f"_npi_{swapped}_scalar", f"np.{fn}:rscalar")


_expose_np_binary()
# Symbol arithmetic (`sym_a + 2`) records MXNet 1.x's operators
for _fn, _ops in {"add": ("elemwise_add", "_plus_scalar", "_plus_scalar"),
                  "subtract": ("elemwise_sub", "_minus_scalar", "_rminus_scalar"),
                  "multiply": ("elemwise_mul", "_mul_scalar", "_mul_scalar"),
                  "true_divide": ("elemwise_div", "_div_scalar", "_rdiv_scalar")}.items():
    for _role, _opname in zip(("binary", "scalar", "rscalar"), _ops):
        expose(_opname, f"sym.{_fn}:{_role}")
