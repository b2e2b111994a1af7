"""Symbolic graphs: `var`, `Group`, `load`/`load_json`, and MXNet's symbol API (`mx.sym.<Op>`)."""
from .graph import Group, Node, Symbol, Variable, var  # noqa: F401
from .json_io import load, load_json  # noqa: F401
from . import _internal, infer, trace  # noqa: F401


def __getattr__(name: str):
    """`mx.sym.<OpName>` for every registered operator name."""
    from ..ops.registry import has_op
    if has_op(name):
        from .ops import make_symbol_function
        return make_symbol_function(name)
    raise AttributeError(f"module 'framework.symbol' has no attribute {name!r}")
