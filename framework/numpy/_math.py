"""Element-wise maths of `framework.np`: unary functions and binary ufuncs with the scalar /
reflected-scalar op selection MXNet 2.x records (`a + 1.5` → its `np.add:scalar` op). The ufuncs
are built from the names the op families expose (`frontend.ops("np", "unary")`)."""
from __future__ import annotations

import numbers

import numpy as _onp

from .. import frontend
from ..frontend import op as _op
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
    f.__doc__ = f"Element-wise `{name}` (op `{op.name}`)."
    return f


for _n, _uop in frontend.ops("np", "unary").items():
    globals()[_n] = _unary(_n, _uop)
    __all__.append(_n)


def positive(x, out=None):
    return _finish(as_nd(x), out)


def around(x, decimals=0, out=None, **kwargs):
    return _finish(invoke(_op("np.around"), [as_nd(x)], {"decimals": int(decimals)}), out)


round = round_ = around  # noqa: A001


def _is_array(x):
    return isinstance(x, (ndarray, _onp.ndarray)) or hasattr(x, "_outputs")


def _scalar_attrs(s):
    return {"scalar": float(s), "is_int": bool(is_int_scalar(s))}


def _binary(name, role="binary"):
    """np.<name> from its three ops: array∘array, array∘number and number∘array."""
    op = _op(f"np.{name}:{role}")
    sop, rsop = _op(f"np.{name}:scalar"), _op(f"np.{name}:rscalar")

    def f(x1, x2, out=None, **kwargs):
        a1, a2 = _is_array(x1), _is_array(x2)
        if a1 and a2:
            res = invoke(op, [as_nd(x1), as_nd(x2)])
        elif a1 and is_scalar(x2):
            res = invoke(sop, [as_nd(x1)], _scalar_attrs(x2))
        elif a2 and is_scalar(x1):
            res = invoke(rsop, [as_nd(x2)], _scalar_attrs(x1))
        elif is_scalar(x1) and is_scalar(x2):
            return getattr(_onp, name)(x1, x2)
        else:
            if x1 is None or x2 is None or not _array_like(x1) or not _array_like(x2):
                return NotImplemented
            res = invoke(op, [as_nd(x1), as_nd(x2)])
        return _finish(res, out)
    f.__name__ = name
    f.__doc__ = f"Element-wise `{name}` (ops `{op.name}`, `{sop.name}`)."
    return f


def _array_like(x):
    return isinstance(x, (list, tuple, numbers.Number, _onp.ndarray, _onp.generic, ndarray))


for _n in frontend.ops("np", "binary"):
    globals()[_n] = _binary(_n)
divide = true_divide  # noqa: F821 (defined above from the registry)
remainder = mod  # noqa: F821


def _cmp(name):
    g = _binary(name, "compare")

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


for _n in frontend.ops("np", "compare"):
    globals()[_n] = _cmp(_n)

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
    """Choose from x where condition is true, else y (the `np.where` ops for arrays, a scalar x,
    a scalar y, or both). With one argument: `nonzero(condition)`."""
    if x is None and y is None:
        return nonzero(condition)
    c = as_nd(condition)
    if is_scalar(x) and is_scalar(y):
        return invoke(_op("np.where:scalar2"), [c], {"x": float(x), "y": float(y)})
    if is_scalar(x):
        return invoke(_op("np.where:lscalar"), [c, as_nd(y)], {"scalar": float(x)})
    if is_scalar(y):
        return invoke(_op("np.where:rscalar"), [c, as_nd(x)], {"scalar": float(y)})
    return invoke(_op("np.where"), [c, as_nd(x), as_nd(y)])


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None, **kwargs):
    x = as_nd(x)
    return ndarray(_onp.nan_to_num(x._data, copy=True, nan=nan, posinf=posinf, neginf=neginf))
