"""MXNet's `mx.sym._internal`: the symbol base class and every registered op as a function
(`_internal._plus(a, b)`), for code that reaches for the internal names."""
from ..ops.registry import has_op
from .graph import Symbol as SymbolBase  # noqa: F401
from .ops import make_symbol_function


def __getattr__(name: str):
    if not name.startswith("__") and has_op(name):
        return make_symbol_function(name)
    raise AttributeError(f"module 'framework.symbol._internal' has no attribute {name!r}")
