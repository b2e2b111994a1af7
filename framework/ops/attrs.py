"""Typed operator attributes: parse MXNet's string attrs (1.x and 2.x spellings) and write them back.

Every attr value in a symbol file is a string: `"(3, 3)"` or `"[3,3]"`, `"True"` or `"1"`, `"None"`.
An `Attr` declares the type and default of one attribute; `parse` accepts both the string form and
the Python value an imperative call passes, so the same schema serves calls, tracing and loading.
"""
from __future__ import annotations

import math
import re
from typing import Any, Callable

import numpy as _np

from ..base import BFLOAT16, OperatorError, is_bfloat16

_REQUIRED = object()


class Attrs(dict):
    """Parsed attributes; `a.kernel` reads `a['kernel']` at plain attribute speed (kernels read
    attrs on every call, so this matters on the hot path)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.__dict__ = self


def _is_none(v: Any) -> bool:
    return v is None or (isinstance(v, str) and v.strip() in ("None", ""))


_INT_RE = re.compile(r"^\s*-?\d+L?\s*$")


def parse_int(v: Any) -> int:
    if isinstance(v, (bool, _np.bool_)):
        return int(v)
    if isinstance(v, (int, _np.integer)):
        return int(v)
    if isinstance(v, float) and v.is_integer():
        return int(v)
    if isinstance(v, str) and _INT_RE.match(v):
        return int(v.strip().rstrip("L"))
    raise ValueError(f"invalid integer {v!r}")


def parse_float(v: Any) -> float:
    if isinstance(v, str):
        s = v.strip().lower()
        if s in ("inf", "+inf", "infinity"):
            return math.inf
        if s in ("-inf", "-infinity"):
            return -math.inf
        return float(s)
    return float(v)


def parse_bool(v: Any) -> bool:
    if isinstance(v, (bool, _np.bool_)):
        return bool(v)
    if isinstance(v, (int, _np.integer)):
        return bool(v)
    if isinstance(v, str):
        s = v.strip().lower()
        if s in ("true", "1"):
            return True
        if s in ("false", "0"):
            return False
    raise ValueError(f"invalid boolean {v!r}")


def parse_tuple(v: Any, elem: Callable[[Any], Any] = parse_int) -> tuple | None:
    """`"(3, 3)"`, `"[3,3]"`, `"3"`, `"()"`, `"None"`, `(3, 3)`, `3` → tuple (or None)."""
    if _is_none(v):
        return None
    if isinstance(v, str):
        s = v.strip()
        if s[:1] in "([" and s[-1:] in ")]":
            body = s[1:-1].strip()
            if not body:
                return ()
            parts = [p for p in body.split(",")]
            if parts and not parts[-1].strip():
                parts = parts[:-1]  # trailing comma
            return tuple(None if _is_none(p) else elem(p.strip()) for p in parts)
        return (elem(s),)
    if isinstance(v, (list, tuple)):
        return tuple(None if x is None else elem(x) for x in v)
    return (elem(v),)


def _fmt_scalar(v: Any) -> str:
    if isinstance(v, (bool, _np.bool_)):
        return "1" if v else "0"
    if isinstance(v, float):
        return repr(v) if not v.is_integer() or abs(v) >= 1e16 else repr(v)
    return str(v)


def format_value(v: Any) -> str:
    """Write a value the way MXNet 2.x serialises parsed params (`[3,3]`, `1`, `None`)."""
    if v is None:
        return "None"
    if isinstance(v, (tuple, list)):
        return "[" + ",".join("None" if x is None else _fmt_scalar(x) for x in v) + "]"
    if isinstance(v, _np.dtype):
        return "bfloat16" if is_bfloat16(v) else v.name
    if isinstance(v, type) and issubclass(v, _np.generic):
        return _np.dtype(v).name
    return _fmt_scalar(v)


class Attr:
    """Schema of one attribute: a parser, a default (`REQUIRED` if mandatory) and allowed values."""

    __slots__ = ("parser", "default", "choices", "optional")

    def __init__(self, parser: Callable[[Any], Any], default: Any = _REQUIRED,
                 choices: tuple | None = None, optional: bool = False):
        self.parser = parser
        self.default = default
        self.choices = choices
        self.optional = optional  # "None" is a legal value

    @property
    def required(self) -> bool:
        return self.default is _REQUIRED

    def parse(self, v: Any) -> Any:
        if (self.optional or self.default is None) and _is_none(v):
            return None
        out = self.parser(v)
        if self.choices is not None and out not in self.choices:
            raise ValueError(f"{out!r} is not one of {list(self.choices)}")
        return out


REQUIRED = _REQUIRED


def Int(default=_REQUIRED, **kw) -> Attr:
    return Attr(parse_int, default, **kw)


def Float(default=_REQUIRED, **kw) -> Attr:
    return Attr(parse_float, default, **kw)


def Bool(default=_REQUIRED, **kw) -> Attr:
    return Attr(parse_bool, default, **kw)


def Shape(default=_REQUIRED, **kw) -> Attr:
    return Attr(parse_tuple, default, **kw)


def FloatTuple(default=_REQUIRED, **kw) -> Attr:
    return Attr(lambda v: parse_tuple(v, parse_float), default, **kw)


def Str(default=_REQUIRED, choices=None, **kw) -> Attr:
    return Attr(lambda v: str(v).strip() if isinstance(v, str) else str(v), default, choices, **kw)


def parse_dtype(v: Any) -> _np.dtype | None:
    if _is_none(v):
        return None
    if isinstance(v, str):
        s = v.strip()
        if s == "bool":
            return _np.dtype(bool)
        if s == "bfloat16":          # no numpy dtype: MXNet's structured one (base.BFLOAT16)
            return BFLOAT16
        return _np.dtype(s)
    return _np.dtype(v)


def DType(default=None, **kw) -> Attr:
    return Attr(parse_dtype, default, optional=True, **kw)


def _int_or_tuple(v: Any):
    if isinstance(v, str) and v.strip()[:1] in "([":
        return parse_tuple(v)
    if isinstance(v, (list, tuple)):
        return tuple(parse_int(x) for x in v)
    return parse_int(v)


def IntOrTuple(default=_REQUIRED, **kw) -> Attr:
    """An axis that may be one int or a tuple (reductions); `None` allowed."""
    return Attr(_int_or_tuple, default, optional=True, **kw)


def parse_attrs(opname: str, schema: dict[str, Attr], raw: dict[str, Any], strict: bool,
                node: str | None = None) -> Attrs:
    """Parse `raw` against `schema`; dunder keys are kept verbatim and never validated."""
    out = Attrs()
    where = f"node '{node}' (op {opname})" if node else f"operator {opname}"
    for k, v in raw.items():
        spec = schema.get(k)
        if spec is None:
            if k.startswith("__") and k.endswith("__"):
                continue
            if strict:
                raise OperatorError(
                    f"{where}: Cannot find argument '{k}', Possible Arguments: {', '.join(schema)}")
            out[k] = v
            continue
        try:
            out[k] = spec.parse(v)
        except (ValueError, TypeError) as e:
            raise OperatorError(f"{where}: invalid value {v!r} for attribute '{k}': {e}") from None
    for k, spec in schema.items():
        if k not in out:
            if spec.required:
                raise OperatorError(f"{where}: Required parameter {k} is missing")
            out[k] = spec.default
    return out
