"""Symbolic op application: `mx.sym.FullyConnected(data=x, num_hidden=10, name='fc1')` and the
composition that `invoke` falls back to when an input is a Symbol. Missing inputs become new
variables named `<node>_<input>` (`fc1_weight`), as in MXNet's symbol API."""
from __future__ import annotations

import itertools
from typing import Any

from ..ops.registry import OpDef, front_op, get_op
from .graph import Node, Symbol, var

_counters: dict[str, itertools.count] = {}


def _auto_name(op: OpDef) -> str:
    c = _counters.setdefault(op.name, itertools.count())
    return f"{op.name.lower().lstrip('_')}{next(c)}"


def compose(op: OpDef | str, inputs: list, attrs: dict[str, Any] | None = None,
            name: str | None = None, named_inputs: dict[str, Symbol] | None = None) -> Symbol:
    if isinstance(op, str):
        op = get_op(op)
    attrs = dict(attrs or {})
    a = op.parse_attrs(attrs)
    name = name or _auto_name(op)
    want = op.input_names(a)
    named = dict(named_inputs or {})
    entries = []
    pos = list(inputs)
    for i, iname in enumerate(want):
        s = named.pop(iname, None)
        if s is None and pos:
            s = pos.pop(0)
        if s is None:
            s = var(f"{name}_{iname}")
        if not isinstance(s, Symbol):
            raise TypeError(f"input {iname} of {op.name} must be a Symbol, got {type(s)}")
        if len(s) != 1:
            raise ValueError(f"input {iname} of {op.name} must have one output, got {len(s)}")
        entries.append(s.outputs[0])
    if pos or named:
        raise ValueError(f"too many inputs for {op.name}: expects {want}")
    raw = op.format_attrs(a)
    raw.update({k: str(v) for k, v in attrs.items() if k.startswith("__")})
    node = Node(op.name, name, raw, entries, op=op)
    return Symbol([(node, i) for i in range(node.num_visible())])


def binary(kind: str, lhs, rhs) -> Symbol:
    """Arithmetic between symbols and scalars (the ops exposed as `sym.<kind>`: MXNet 1.x's)."""
    if isinstance(lhs, Symbol) and isinstance(rhs, Symbol):
        return compose(front_op(f"sym.{kind}:binary"), [lhs, rhs])
    if isinstance(lhs, Symbol):
        return compose(front_op(f"sym.{kind}:scalar"), [lhs], {"scalar": float(rhs)})
    return compose(front_op(f"sym.{kind}:rscalar"), [rhs], {"scalar": float(lhs)})


def make_symbol_function(opname: str):
    def fn(*args, name: str | None = None, attr: dict | None = None, **kwargs):
        op = get_op(opname)
        named = {k: v for k, v in kwargs.items() if isinstance(v, Symbol)}
        attrs = {k: v for k, v in kwargs.items() if not isinstance(v, Symbol)}
        if attr:
            attrs.update(attr)
        if "num_args" in op.attrs and "num_args" not in attrs:
            attrs["num_args"] = len(args) + len(named)   # variadic ops count their inputs
        return compose(op, list(args), attrs, name, named)
    fn.__name__ = opname
    return fn
