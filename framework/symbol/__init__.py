"""Symbolic graphs: `var`, `Group`, `load`/`load_json`, and MXNet's symbol API (`mx.sym.<Op>`)."""
from ..ops.registry import has_op
from . import _internal, infer, trace  # noqa: F401
from ._methods import bind as _bind_methods
from .graph import Group, Node, Symbol, Variable, var  # noqa: F401
from .json_io import load, load_json  # noqa: F401
from .ops import make_symbol_function

_bind_methods()      # tojson, save, infer_shape/type and arithmetic on Symbol


def __getattr__(name: str):
    """`mx.sym.<OpName>` for every registered operator name."""
    if has_op(name):
        return make_symbol_function(name)
    raise AttributeError(f"module 'framework.symbol' has no attribute {name!r}")
