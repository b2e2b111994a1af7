"""Element-wise maths of `framework.np`: unary functions and binary ufuncs with the scalar /
reflected-scalar op selection MXNet 2.x records (`a + 1.5` → `_npi_add_scalar`)."""
from __future__ import annotations

import numbers

import numpy as _onp

from ._base import as_nd, invoke, is_int_scalar, is_scalar, ndarray
from ._shape import nonzero

__all__: list[str] = []


def _finish(res, out):
    if out is None:
        return res
    if not isinstance(out, ndarray):
        raise TypeError("out must be a framework ndarray")
    _onp.copyto(out._data, res._data, casting="unsafe")
    return out


def _unary(name, op):
    def f(x, out=None, **kwargs):
        if is_scalar(x):
            return getattr(_onp, name)(x)
        return _finish(invoke(op, [as_nd(x)]), out)
    f.__name__ = name
    f.__doc__ = f"Element-wise `{name}` (op `{op}`)."
    return f


_UNARY = {
    "negative": "_npi_negative", "absolute": "_npi_absolute", "abs": "_npi_absolute",
    "sign": "_npi_sign", "exp": "_npi_exp", "expm1": "_npi_expm1", "log": "_npi_log",
    "log1p": "_npi_log1p", "log2": "_npi_log2", "log10": "_npi_log10", "sqrt": "_npi_sqrt",
    "cbrt": "_npi_cbrt", "square": "_npi_square", "reciprocal": "_npi_reciprocal",
    "sin": "_npi_sin", "cos": "_npi_cos", "tan": "_npi_tan", "arcsin": "_npi_arcsin",
    "arccos": "_npi_arccos", "arctan": "_npi_arctan", "sinh": "_npi_sinh", "cosh": "_npi_cosh",
    "tanh": "_npi_tanh", "arcsinh": "_npi_arcsinh", "arccosh": "_npi_arccosh",
    "arctanh": "_npi_arctanh", "degrees": "_npi_degrees", "radians": "_npi_radians",
    "rad2deg": "_npi_degrees", "deg2rad": "_npi_radians", "floor": "_npi_floor",
    "ceil": "_npi_ceil", "trunc": "_npi_trunc", "fix": "_npi_fix", "rint": "_npi_rint",
    "logical_not": "_npi_logical_not", "invert": "_npi_bitwise_not",
    "bitwise_not": "_npi_bitwise_not", "isnan": "_npi_isnan", "isinf": "_npi_isinf",
    "isfinite": "_npi_isfinite", "fabs": "_npi_absolute", "isposinf": "_npi_isposinf", "isneginf": "_npi_isneginf",
}

for _n, _op in _UNARY.items():
    globals()[_n] = _unary(_n, _op)
    __all__.append(_n)


def positive(x, out=None):
    return _finish(as_nd(x), out)


def around(x, decimals=0, out=None, **kwargs):
    return _finish(invoke("_npi_around", [as_nd(x)], {"decimals": int(decimals)}), out)


round = round_ = around  # noqa: A001


def _is_array(x):
    return isinstance(x, (ndarray, _onp.ndarray)) or hasattr(x, "_outputs")


def _scalar_attrs(s):
    return {"scalar": float(s), "is_int": bool(is_int_scalar(s))}


def _binary(name, op, sop, rsop=None, commutative=False, cmp_swap=None, py=None):
    """`op` for array∘array, `sop` for array∘scalar, `rsop` for scalar∘array."""

    def f(x1, x2, out=None, **kwargs):
        a1, a2 = _is_array(x1), _is_array(x2)
        if a1 and a2:
            res = invoke(op, [as_nd(x1), as_nd(x2)])
        elif a1 and is_scalar(x2):
            res = invoke(sop, [as_nd(x1)], _scalar_attrs(x2))
        elif a2 and is_scalar(x1):
            if commutative:
                res = invoke(sop, [as_nd(x2)], _scalar_attrs(x1))
            elif cmp_swap is not None:
                res = invoke(cmp_swap, [as_nd(x2)], _scalar_attrs(x1))
            elif rsop is not None:
                res = invoke(rsop, [as_nd(x2)], _scalar_attrs(x1))
            else:
                res = invoke(op, [as_nd(x1), as_nd(x2)])
        elif is_scalar(x1) and is_scalar(x2):
            return (py or getattr(_onp, name))(x1, x2)
        else:
            if x1 is None or x2 is None or not _array_like(x1) or not _array_like(x2):
                return NotImplemented
            res = invoke(op, [as_nd(x1), as_nd(x2)])
        return _finish(res, out)
    f.__name__ = name
    f.__doc__ = f"Element-wise `{name}` (ops `{op}`, `{sop}`)."
    return f


def _array_like(x):
    return isinstance(x, (list, tuple, numbers.Number, _onp.ndarray, _onp.generic, ndarray))


add = _binary("add", "_npi_add", "_npi_add_scalar", commutative=True)
subtract = _binary("subtract", "_npi_subtract", "_npi_subtract_scalar", "_npi_rsubtract_scalar")
multiply = _binary("multiply", "_npi_multiply", "_npi_multiply_scalar", commutative=True)
true_divide = _binary("true_divide", "_npi_true_divide", "_npi_true_divide_scalar",
                      "_npi_rtrue_divide_scalar")
divide = true_divide
floor_divide = _binary("floor_divide", "_npi_floor_divide", "_npi_floor_divide_scalar",
                       "_npi_rfloor_divide_scalar")
power = _binary("power", "_npi_power", "_npi_power_scalar", "_npi_rpower_scalar")
mod = _binary("mod", "_npi_mod", "_npi_mod_scalar", "_npi_rmod_scalar")
remainder = mod
fmod = _binary("fmod", "_npi_fmod", "_npi_fmod_scalar", "_npi_rfmod_scalar")
# MXNet 2.0 records np.maximum/np.minimum with the 1.x op names
maximum = _binary("maximum", "broadcast_maximum", "_maximum_scalar", commutative=True)
minimum = _binary("minimum", "broadcast_minimum", "_minimum_scalar", commutative=True)
fmax = _binary("fmax", "_npi_fmax", "_npi_fmax_scalar", commutative=True)
fmin = _binary("fmin", "_npi_fmin", "_npi_fmin_scalar", commutative=True)
logaddexp = _binary("logaddexp", "_npi_logaddexp", "_npi_logaddexp_scalar", commutative=True)
hypot = _binary("hypot", "_npi_hypot", "_hypot_scalar", commutative=True)
arctan2 = _binary("arctan2", "_npi_arctan2", "_npi_arctan2_scalar", "_npi_rarctan2_scalar")
copysign = _binary("copysign", "_npi_copysign", "_npi_copysign_scalar", "_npi_rcopysign_scalar")
ldexp = _binary("ldexp", "_npi_ldexp", "_npi_ldexp_scalar", "_npi_rldexp_scalar")
lcm = _binary("lcm", "_npi_lcm", "_npi_lcm_scalar", commutative=True)
gcd = _binary("gcd", "_npi_gcd", "_npi_gcd_scalar", commutative=True)
bitwise_and = _binary("bitwise_and", "_npi_bitwise_and", "_npi_bitwise_and_scalar",
                      commutative=True)
bitwise_or = _binary("bitwise_or", "_npi_bitwise_or", "_npi_bitwise_or_scalar", commutative=True)
bitwise_xor = _binary("bitwise_xor", "_npi_bitwise_xor", "_npi_bitwise_xor_scalar",
                      commutative=True)
left_shift = _binary("left_shift", "_npi_left_shift", "_npi_left_shift_scalar",
                     "_npi_rleft_shift_scalar")
right_shift = _binary("right_shift", "_npi_right_shift", "_npi_right_shift_scalar",
                      "_npi_rright_shift_scalar")
logical_and = _binary("logical_and", "_npi_logical_and", "_npi_logical_and_scalar",
                      commutative=True)
logical_or = _binary("logical_or", "_npi_logical_or", "_npi_logical_or_scalar", commutative=True)
logical_xor = _binary("logical_xor", "_npi_logical_xor", "_npi_logical_xor_scalar",
                      commutative=True)


def _cmp(name, base, swapped):
    g = _binary(name, f"_npi_{base}", f"_npi_{base}_scalar", cmp_swap=f"_npi_{swapped}_scalar")

    def f(x1, x2, out=None, **kwargs):
        r = g(x1, x2, out=out)
        if r is NotImplemented:
            if name == "equal":
                return False
            if name == "not_equal":
                return True
            raise TypeError(f"'{name}' not supported between {type(x1).__name__} and "
                            f"{type(x2).__name__}")
        return r
    f.__name__ = name
    return f


equal = _cmp("equal", "equal", "equal")
not_equal = _cmp("not_equal", "not_equal", "not_equal")
greater = _cmp("greater", "greater", "less")
greater_equal = _cmp("greater_equal", "greater_equal", "less_equal")
less = _cmp("less", "less", "greater")
less_equal = _cmp("less_equal", "less_equal", "greater_equal")

__all__ += ["positive", "around", "round", "round_", "add", "subtract", "multiply",
            "true_divide", "divide", "floor_divide", "power", "mod", "remainder", "fmod",
            "maximum", "minimum", "logaddexp", "fmax", "fmin", "hypot", "arctan2", "copysign", "ldexp", "lcm",
            "gcd", "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift",
            "logical_and", "logical_or", "logical_xor", "equal", "not_equal", "greater",
            "greater_equal", "less", "less_equal", "clip", "where", "nan_to_num"]


def clip(a, a_min=None, a_max=None, out=None, **kwargs):
    """Clamp into [a_min, a_max] (op `clip`)."""
    if a_min is None and a_max is None:
        raise ValueError("array_clip: must set either max or min")
    if isinstance(a_min, ndarray) or isinstance(a_max, ndarray):
        r = a
        if a_min is not None:
            r = maximum(r, a_min)
        if a_max is not None:
            r = minimum(r, a_max)
        return _finish(r, out)
    return _finish(invoke("clip", [as_nd(a)], {"a_min": a_min, "a_max": a_max}), out)


def where(condition, x=None, y=None):
    """Choose from x where condition is true, else y (ops `_npi_where`, `_npi_where_lscalar`,
    `_npi_where_rscalar`, `_npi_where_scalar2`). With one argument: `nonzero(condition)`."""
    if x is None and y is None:
        return nonzero(condition)
    c = as_nd(condition)
    if is_scalar(x) and is_scalar(y):
        return invoke("_npi_where_scalar2", [c], {"x": float(x), "y": float(y)})
    if is_scalar(x):
        return invoke("_npi_where_lscalar", [c, as_nd(y)], {"scalar": float(x)})
    if is_scalar(y):
        return invoke("_npi_where_rscalar", [c, as_nd(x)], {"scalar": float(y)})
    return invoke("_npi_where", [c, as_nd(x), as_nd(y)])


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None, **kwargs):
    x = as_nd(x)
    return ndarray(_onp.nan_to_num(x._data, copy=True, nan=nan, posinf=posinf, neginf=neginf))
