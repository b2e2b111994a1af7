"""Unary element-wise maths: one OpDef per function, 1.x names and 2.x `_npi_*` names as aliases.

Dtype rule (MXNet 2.x numpy): transcendental functions of integer/bool input give float32;
sign/abs/negative/square/rounding keep the input dtype. 1.x names share the same op.
"""
from __future__ import annotations

import numpy as np

from .._kernels import special as _sp
from ..common import F32, BOOL, float_math, is_float, same_shape
from ..attrs import Int
from ..lowering import lowers, lowers_named
from ..registry import expose, register


def _ret(r):
    return r if type(r) is np.ndarray else np.asarray(r)


def _float_in(x):
    return x if is_float(x.dtype) else x.astype(F32)


def _float_type(a, d):
    return [d[0] if is_float(d[0]) else F32]


def _keep_type(a, d):
    return [d[0]]


def _rint(x, out=None):
    f = np.floor(x)
    c = np.ceil(x)
    return np.where(x - f <= c - x, f, c)


def _round_away(x, out=None):
    """MXNet `round`: half away from zero."""
    r = np.floor(np.abs(x) + x.dtype.type(0.5))
    return np.copysign(r, x, out=out)


def _rsqrt(x, out=None):
    return np.reciprocal(np.sqrt(x), out=out)


def _rcbrt(x, out=None):
    return np.reciprocal(np.cbrt(x), out=out)


def _erf(x, out=None):
    return _sp.erf(x)


def _erfinv(x, out=None):
    return _sp.erfinv(x)


def _gamma(x, out=None):
    return _sp.gamma(x)


def _gammaln(x, out=None):
    return _sp.gammaln(x)


@float_math   # MXNet: 1/x computed in float, stored in x's dtype (int 2 → 0)
def _reciprocal(x, out=None):
    return np.divide(x.dtype.type(1), x, out=out)


def _degrees(x, out=None):
    return np.degrees(x, out=out)


# name, aliases, numpy function, float-only (int input → float32)
_FLOAT_FNS = [
    ("exp", ("_npi_exp",), np.exp),
    ("expm1", ("_npi_expm1",), np.expm1),
    ("log", ("_npi_log",), np.log),
    ("log1p", ("_npi_log1p",), np.log1p),
    ("log2", ("_npi_log2",), np.log2),
    ("log10", ("_npi_log10",), np.log10),
    ("sqrt", ("_npi_sqrt",), np.sqrt),
    ("rsqrt", (), _rsqrt),
    ("cbrt", ("_npi_cbrt",), np.cbrt),
    ("rcbrt", (), _rcbrt),
    ("sin", ("_npi_sin",), np.sin),
    ("cos", ("_npi_cos",), np.cos),
    ("tan", ("_npi_tan",), np.tan),
    ("arcsin", ("_npi_arcsin",), np.arcsin),
    ("arccos", ("_npi_arccos",), np.arccos),
    ("arctan", ("_npi_arctan",), np.arctan),
    ("sinh", ("_npi_sinh",), np.sinh),
    ("cosh", ("_npi_cosh",), np.cosh),
    ("tanh", ("_npi_tanh",), np.tanh),
    ("arcsinh", ("_npi_arcsinh",), np.arcsinh),
    ("arccosh", ("_npi_arccosh",), np.arccosh),
    ("arctanh", ("_npi_arctanh",), np.arctanh),
    ("degrees", ("_npi_degrees",), _degrees),
    ("radians", ("_npi_radians", "_npi_deg2rad"), np.radians),
    ("erf", ("_npx_erf",), _erf),
    ("erfinv", ("_npx_erfinv",), _erfinv),
    ("gamma", ("_npx_gamma",), _gamma),
    ("gammaln", ("_npx_gammaln",), _gammaln),
]

# dtype-preserving functions
_KEEP_FNS = [
    ("abs", ("_npi_absolute", "_npi_abs"), np.abs),
    ("negative", ("_npi_negative",), np.negative),
    ("sign", ("_npi_sign",), np.sign),
    ("square", ("_npi_square",), np.square),
    ("reciprocal", ("_npi_reciprocal",), _reciprocal),
    ("floor", ("_npi_floor",), np.floor),
    ("ceil", ("_npi_ceil",), np.ceil),
    ("trunc", ("_npi_trunc",), np.trunc),
    ("fix", ("_npi_fix",), np.trunc),
    ("rint", ("_npi_rint",), _rint),
    ("round", (), _round_away),
]


def _make_float(fn):
    def kernel(a, x, out=None):
        x = _float_in(x)
        with np.errstate(all="ignore"):
            if out is not None:
                fn(x, out=out)
                return out
            return _ret(fn(x))
    return kernel


def _make_keep(fn, rounding=False):
    def kernel(a, x, out=None):
        if rounding and not is_float(x.dtype):
            return x.copy()
        with np.errstate(all="ignore"):
            if out is not None:
                out[...] = fn(x)
                return out
            return _ret(fn(x))
    return kernel


def _names(name, aliases):
    """The 2.x `_npi_*` name first: tracing records the canonical name, as MXNet 2.x does."""
    npi = [n for n in aliases if n.startswith("_npi_")]
    rest = [n for n in aliases if not n.startswith("_npi_")]
    return (npi[0], name, *npi[1:], *rest) if npi else (name, *aliases)


for _name, _aliases, _fn in _FLOAT_FNS:
    register(*_names(_name, _aliases), infer_shape=same_shape, infer_type=_float_type,
             out=True, elementwise=True)(_make_float(_fn))

for _name, _aliases, _fn in _KEEP_FNS:
    _rounding = _name in ("floor", "ceil", "trunc", "fix", "rint", "round")
    register(*_names(_name, _aliases), infer_shape=same_shape, infer_type=_keep_type,
             out=True, elementwise=True)(_make_keep(_fn, _rounding))


@register("_npi_around", attrs={"decimals": Int(0)}, infer_shape=same_shape,
          infer_type=_keep_type, elementwise=True)
def around(a, x):
    """NumPy `around` (half to even), `decimals` digits."""
    if not is_float(x.dtype) and a.decimals >= 0:
        return x.copy()
    return _ret(np.around(x, a.decimals).astype(x.dtype, copy=False))


def _bool_type(a, d):
    return [BOOL]


def _pred(fn):
    def kernel(a, x):
        return _ret(fn(x))
    return kernel


for _name, _fn in [("_npi_isnan", np.isnan), ("_npi_isinf", np.isinf),
                   ("_npi_isfinite", np.isfinite), ("_npi_isposinf", np.isposinf),
                   ("_npi_isneginf", np.isneginf)]:
    register(_name, infer_shape=same_shape, infer_type=_bool_type,
             elementwise=True)(_pred(_fn))


@register("logical_not", infer_shape=same_shape, infer_type=_keep_type, elementwise=True)
def logical_not_legacy(a, x):
    """1.x `logical_not`: 1/0 in the input dtype."""
    return _ret(np.logical_not(x).astype(x.dtype))


@register("_npi_logical_not", "_np_logical_not", infer_shape=same_shape, infer_type=_bool_type,
          elementwise=True)
def logical_not(a, x):
    return _ret(np.logical_not(x))


@register("_npi_bitwise_not", "_npi_invert", infer_shape=same_shape, infer_type=_keep_type,
          elementwise=True)
def bitwise_not(a, x):
    if is_float(x.dtype):
        raise TypeError("bitwise_not is only defined for integer and boolean arrays")
    return _ret(np.invert(x))


# -- ONNX lowering ------------------------------------------------------------------------------


def _op(kind):
    return lambda ctx, x: ctx.op(kind, [x])


def _scaled(kind, factor):
    return lambda ctx, x: ctx.op("Mul", [ctx.op(kind, [x]), ctx.scalar(factor, x)])


def _minus_one(ctx, x):
    return ctx.op("Sub", [ctx.op("Exp", [x]), ctx.scalar(1, x)])


def _log1p(ctx, x):
    return ctx.op("Log", [ctx.op("Add", [x, ctx.scalar(1, x)])])


def _cbrt(ctx, x):
    mag = ctx.op("Pow", [ctx.op("Abs", [x]), ctx.scalar(1 / 3, x)])
    return ctx.op("Mul", [ctx.op("Sign", [x]), mag])


def _trunc(ctx, x):
    return ctx.op("Where", [ctx.op("Less", [x, ctx.scalar(0, x)]), ctx.op("Ceil", [x]),
                            ctx.op("Floor", [x])])


def _rint_down(ctx, x):
    """The kernel's rint: the nearer integer, ties to the lower one."""
    f, c = ctx.op("Floor", [x]), ctx.op("Ceil", [x])
    return ctx.op("Where", [ctx.op("LessOrEqual", [ctx.op("Sub", [x, f]), ctx.op("Sub", [c, x])]),
                            f, c])


def _round_away_onnx(ctx, x):
    r = ctx.op("Floor", [ctx.op("Add", [ctx.op("Abs", [x]), ctx.scalar(0.5, x)])])
    return ctx.op("Mul", [ctx.op("Sign", [x]), r])


# each function above's ONNX form (by canonical name), computed in the output dtype
_ONNX_UNARY = {
    "exp": _op("Exp"), "expm1": _minus_one, "log": _op("Log"), "log1p": _log1p,
    "log2": _scaled("Log", 1 / np.log(2)), "log10": _scaled("Log", 1 / np.log(10)),
    "sqrt": _op("Sqrt"), "rsqrt": lambda ctx, x: ctx.op("Reciprocal", [ctx.op("Sqrt", [x])]),
    "cbrt": _cbrt, "rcbrt": lambda ctx, x: ctx.op("Reciprocal", [_cbrt(ctx, x)]),
    "sin": _op("Sin"), "cos": _op("Cos"), "tan": _op("Tan"), "arcsin": _op("Asin"),
    "arccos": _op("Acos"), "arctan": _op("Atan"), "sinh": _op("Sinh"), "cosh": _op("Cosh"),
    "tanh": _op("Tanh"), "arcsinh": _op("Asinh"), "arccosh": _op("Acosh"),
    "arctanh": _op("Atanh"), "degrees": lambda ctx, x: ctx.op("Mul", [x, ctx.scalar(
        180 / np.pi, x)]), "radians": lambda ctx, x: ctx.op("Mul", [x, ctx.scalar(np.pi / 180, x)]),
    "erf": _op("Erf"),
    "abs": _op("Abs"), "negative": _op("Neg"), "sign": _op("Sign"),
    "square": lambda ctx, x: ctx.op("Mul", [x, x]), "reciprocal": _op("Reciprocal"),
    "floor": _op("Floor"), "ceil": _op("Ceil"), "trunc": _trunc, "fix": _trunc,
    "rint": _rint_down, "round": _round_away_onnx,
}


def _unary_onnx(build, rounding: bool):
    def fn(ctx, node, ins):
        dt = ctx.out_dtype()
        if rounding and not is_float(dt):
            return ctx.op("Identity", ins)
        x = ctx.cast(ins[0], dt)
        ctx.note_dtype(x, dt)              # scalars built inside take its dtype
        return build(ctx, x)
    return fn


for _name, _aliases, _fn in _FLOAT_FNS + _KEEP_FNS:
    if _name in _ONNX_UNARY:
        lowers_named(_name)(_unary_onnx(_ONNX_UNARY[_name], _name in (
            "floor", "ceil", "trunc", "fix", "rint", "round")))


@lowers(logical_not_legacy)
def _logical_not_legacy_onnx(ctx, node, ins):
    r = ctx.op("Not", [ctx.cast(ins[0], BOOL)])
    return ctx.op("Cast", [r], to=ctx.tensor_type(ctx.out_dtype()))


@lowers(logical_not)
def _logical_not_onnx(ctx, node, ins):
    return ctx.op("Not", [ctx.cast(ins[0], BOOL)])


@lowers(around)
def _around_onnx(ctx, node, ins):
    """Half to even at `decimals` digits: Round(x · 10^d) / 10^d, as NumPy computes it."""
    x, d = ins[0], node.parsed.decimals
    if not is_float(ctx.dtype(x)) and d >= 0:
        return ctx.op("Identity", [x])
    if d == 0:
        return ctx.op("Round", [x])
    k = ctx.scalar(10.0 ** d, x)
    return ctx.op("Div", [ctx.op("Round", [ctx.op("Mul", [x, k])]), k])


def _isinf_onnx(pos: int, neg: int):
    return lambda ctx, x: ctx.op("IsInf", [x], detect_positive=pos, detect_negative=neg)


def _isfinite_onnx(ctx, x):
    bad = ctx.op("Or", [ctx.op("IsNaN", [x]), ctx.op("IsInf", [x])])
    return ctx.op("Not", [bad])


_ONNX_PRED = {"_npi_isnan": lambda ctx, x: ctx.op("IsNaN", [x]), "_npi_isinf": _isinf_onnx(1, 1),
              "_npi_isposinf": _isinf_onnx(1, 0), "_npi_isneginf": _isinf_onnx(0, 1),
              "_npi_isfinite": _isfinite_onnx}


def _pred_onnx(build):
    def fn(ctx, node, ins):
        x = ins[0]
        if not is_float(ctx.dtype(x)):               # integers are never NaN or infinite
            value = node.op.name == "_npi_isfinite"
            return ctx.op("Not", [ctx.zeros_like(x, BOOL)]) if value else ctx.zeros_like(x, BOOL)
        return build(ctx, x)
    return fn


for _name, _build in _ONNX_PRED.items():
    lowers_named(_name)(_pred_onnx(_build))


@lowers(bitwise_not)
def _bitwise_not_onnx(ctx, node, ins):
    if ctx.dtype(ins[0]) == BOOL:
        return ctx.op("Not", ins)
    return ctx.op("BitwiseNot", ins)


# -- front-ends: mxnet.numpy's unary ufuncs (np.<name>: scalars go to NumPy; `out=` honoured) -
_NP_UNARY = {
    "_npi_negative": ("negative",), "_npi_absolute": ("absolute", "abs", "fabs"),
    "_npi_sign": ("sign",), "_npi_exp": ("exp",), "_npi_expm1": ("expm1",), "_npi_log": ("log",),
    "_npi_log1p": ("log1p",), "_npi_log2": ("log2",), "_npi_log10": ("log10",),
    "_npi_sqrt": ("sqrt",), "_npi_cbrt": ("cbrt",), "_npi_square": ("square",),
    "_npi_reciprocal": ("reciprocal",), "_npi_sin": ("sin",), "_npi_cos": ("cos",),
    "_npi_tan": ("tan",), "_npi_arcsin": ("arcsin",), "_npi_arccos": ("arccos",),
    "_npi_arctan": ("arctan",), "_npi_sinh": ("sinh",), "_npi_cosh": ("cosh",),
    "_npi_tanh": ("tanh",), "_npi_arcsinh": ("arcsinh",), "_npi_arccosh": ("arccosh",),
    "_npi_arctanh": ("arctanh",), "_npi_degrees": ("degrees", "rad2deg"),
    "_npi_radians": ("radians", "deg2rad"), "_npi_floor": ("floor",), "_npi_ceil": ("ceil",),
    "_npi_trunc": ("trunc",), "_npi_fix": ("fix",), "_npi_rint": ("rint",),
    "_npi_logical_not": ("logical_not",), "_npi_bitwise_not": ("invert", "bitwise_not"),
    "_npi_isnan": ("isnan",), "_npi_isinf": ("isinf",), "_npi_isfinite": ("isfinite",),
    "_npi_isposinf": ("isposinf",), "_npi_isneginf": ("isneginf",),
}
for _name, _fns in _NP_UNARY.items():
    expose(_name, *(f"np.{f}:unary" for f in _fns))
expose("_npi_around", "np.around")
for _name in ("erf", "erfinv", "gamma", "gammaln"):
    expose(_name, f"npx.{_name}(data, **kwargs)")
