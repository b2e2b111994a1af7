"""`Symbol`'s methods that live in the modules built on the graph: serialisation (`tojson`,
`save`), inference (`infer_shape`, `infer_type`) and arithmetic (`a + b` composes registry ops).
Bound once by the package, so graph.py imports none of the modules that import it."""
from __future__ import annotations

from ..io.atomic import write_atomic
from . import infer, ops
from .graph import Symbol
from .json_io import to_json


def _tojson(self: Symbol, remove_amp_cast: bool = True) -> str:
    return to_json(self, remove_amp_cast=remove_amp_cast)


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
    for dunder, kind in (("add", "add"), ("sub", "subtract"), ("mul", "multiply")):
        setattr(Symbol, f"__{dunder}__", _arith(kind))
        setattr(Symbol, f"__r{dunder}__", _arith(kind, reflected=True))
    Symbol.__truediv__ = _arith("true_divide")
