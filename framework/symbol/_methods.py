"""`Symbol`'s methods that live in the modules built on the graph: serialisation (`tojson`,
`save`, pickling), inference (`infer_shape`, `infer_type`, `infer_shape_partial`), composition
(calling a symbol, `_compose`, `_set_attr`) and arithmetic (`a + b` composes registry ops).
Bound once by the package, so graph.py imports none of the modules that import it."""
from __future__ import annotations

from .._np_state import is_np_shape
from ..io.atomic import write_atomic
from . import compose, infer, ops
from .graph import Symbol
from .json_io import load_json, to_json


def _tojson(self: Symbol, remove_amp_cast: bool = True) -> str:
    return to_json(self, remove_amp_cast=remove_amp_cast, np_shape=is_np_shape())


def _getstate(self: Symbol) -> dict:
    return {"json": self.tojson()}


def _setstate(self: Symbol, state: dict) -> None:
    self._outputs = load_json(state["json"])._outputs


def _call(self: Symbol, *args, name: str | None = None, **kwargs) -> Symbol:
    return compose.call(self, args, kwargs, name)


def _compose(self: Symbol, *args, name: str | None = None, **kwargs) -> None:
    self._outputs = self(*args, name=name, **kwargs)._outputs


def _set_attr(self: Symbol, **kwargs) -> None:
    compose.set_attr(self, kwargs)


def _gen_atomic_symbol(self: Symbol) -> Symbol:
    return compose.atomic(self)


def _infer_shape_partial(self: Symbol, *args, **kwargs):
    return infer.infer_shape(self, *args, _partial=True, **kwargs)


def _save(self: Symbol, fname: str, remove_amp_cast: bool = True) -> None:
    write_atomic(fname, self.tojson(remove_amp_cast).encode("utf-8"))


def _infer_shape(self: Symbol, *args, **kwargs):
    return infer.infer_shape(self, *args, **kwargs)


def _infer_type(self: Symbol, *args, **kwargs):
    return infer.infer_type(self, *args, **kwargs)


def _arith(kind: str, reflected: bool = False):
    def method(self: Symbol, other):
        return ops.binary(kind, other, self) if reflected else ops.binary(kind, self, other)
    return method


def bind() -> None:
    Symbol.tojson = _tojson
    Symbol.save = _save
    Symbol.infer_shape = _infer_shape
    Symbol.infer_type = _infer_type
    Symbol.infer_shape_partial = _infer_shape_partial
    Symbol.__getstate__, Symbol.__setstate__ = _getstate, _setstate
    Symbol.__call__ = _call
    Symbol._compose, Symbol._set_attr = _compose, _set_attr
    Symbol._gen_atomic_symbol = _gen_atomic_symbol
    for dunder, kind in (("add", "add"), ("sub", "subtract"), ("mul", "multiply")):
        setattr(Symbol, f"__{dunder}__", _arith(kind))
        setattr(Symbol, f"__r{dunder}__", _arith(kind, reflected=True))
    Symbol.__truediv__ = _arith("true_divide")
