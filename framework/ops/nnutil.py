"""Shared helpers of the neural-network op families (activation, softmax, conv, pool, norm…)."""
from __future__ import annotations

import numpy as np

from ..base import OperatorError, ShapeError
from .attrs import Attr, _is_none, parse_bool, parse_float, parse_int, parse_tuple


class CFloat(float):
    """A float attr written the way MXNet's C++ `ostream << float` writes it (`%g`: 2.0 → "2",
    1e-05 → "1e-05", 0.334 → "0.334")."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "%g" % float(self)

    __str__ = __repr__


def parse_cfloat(v) -> CFloat:
    return CFloat(parse_float(v))


def CF(default=None, optional: bool = False) -> Attr:
    """Float attr (MXNet `float`/`double`, or `optional<float>` with `optional=True`)."""
    d = CFloat(default) if isinstance(default, (int, float)) and not isinstance(default, bool) \
        else default
    return Attr(parse_cfloat, d, optional=optional or default is None)


def _opt_tuple(v):
    if _is_none(v):
        return None
    return parse_tuple(v)


def OptShape(default=None) -> Attr:
    """A TShape attr whose default is "unset" (`None`); `()`/`[]` parse to an empty tuple."""
    return Attr(_opt_tuple, default, optional=True)


def _opt_bool(v):
    if _is_none(v):
        return None
    return parse_bool(v)


def OptBool(default=None) -> Attr:
    return Attr(_opt_bool, default, optional=True)


def _opt_int(v):
    if _is_none(v):
        return None
    return parse_int(v)


def OptInt(default=None) -> Attr:
    return Attr(_opt_int, default, optional=True)


def OptStr(choices: tuple) -> Attr:
    """An optional enum (`layout`, `cudnn_tune`): `None` unless set."""
    def p(v):
        s = str(v).strip()
        if s not in choices:
            raise ValueError(f"{s!r} is not one of {list(choices)}")
        return s
    return Attr(p, None, optional=True)


def spatial(t, nd: int, fill: int, name: str = "") -> tuple:
    """Expand an unset/empty tuple attr to `nd` copies of `fill`; check the length otherwise."""
    if t is None or len(t) == 0:
        return (fill,) * nd
    t = tuple(int(v) for v in t)
    if len(t) == 1 and nd > 1:
        return t * nd
    if len(t) != nd:
        raise OperatorError(f"{name}: expected {nd} values, got {t}")
    return t


def channel_last(layout) -> bool:
    return layout is not None and layout in ("NWC", "NHWC", "NDHWC")


def to_channel_first(x: np.ndarray) -> np.ndarray:
    return np.moveaxis(x, -1, 1)


def to_channel_last(x: np.ndarray) -> np.ndarray:
    return np.moveaxis(x, 1, -1)


def prod(shape) -> int:
    p = 1
    for s in shape:
        p *= int(s)
    return p


def check_param_shapes(opname: str, given: list, expected: list) -> None:
    """MXNet's SHAPE_ASSIGN_CHECK for weights/biases/states: a known input shape must equal the
    one the op derives from the data shape (shape inference relies on this to reject guesses)."""
    names = ("data", "weight", "bias")
    for i, (g, e) in enumerate(zip(given, expected)):
        if i == 0 or g is None or e is None:
            continue
        if tuple(g) != tuple(e):
            what = names[i] if i < len(names) else f"input {i}"
            raise ShapeError(f"{opname}: {what} has shape {tuple(g)}, expected {tuple(e)} "
                             f"for data of shape {tuple(given[0])}")
