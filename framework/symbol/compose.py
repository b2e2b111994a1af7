"""Composing symbols MXNet's way: calling a symbol replaces its variables, `_set_attr` edits the
head node, `_gen_atomic_symbol` makes a fresh node of the head's operator."""
from __future__ import annotations

from .graph import Node, Symbol
from .ops import compose


def call(sym: Symbol, args: tuple, kwargs: dict, name: str | None = None) -> Symbol:
    """`sym(x, y)` / `sym(data=x)`: a copy of `sym` whose named (or, positionally, whose
    argument-order) variables are the given symbols' outputs."""
    if args and kwargs:
        raise TypeError("compose only accepts input Symbols either as positional or keyword "
                        "arguments, not both")
    names = sym.list_arguments()
    given = dict(zip(names, args)) if args else dict(kwargs)
    if len(args) > len(names):
        raise TypeError(f"too many positional inputs: the symbol has arguments {names}")
    for k, v in given.items():
        if not isinstance(v, Symbol) or len(v) != 1:
            raise TypeError(f"input {k!r} must be a Symbol with one output, got {v!r}")
    new: dict[int, tuple] = {}
    for n in sym.topo():
        if n.is_var and n.name in given:
            new[id(n)] = given[n.name].outputs[0]
            continue
        c = Node(n.opname, n.name, n.attrs, op=n.op)
        c.inputs = [(new[id(src)][0], new[id(src)][1] + i) for src, i in n.inputs]
        c.control_deps = [new[id(d)][0] for d in n.control_deps]
        c.subgraphs, c._parsed = n.subgraphs, n._parsed
        new[id(n)] = (c, 0)
    outs = [(new[id(n)][0], new[id(n)][1] + i) for n, i in sym.outputs]
    if name is not None and len(outs) == 1 and not outs[0][0].is_var:
        outs[0][0].name = name
    return type(sym)(outs)


def set_attr(sym: Symbol, attrs: dict) -> None:
    """Set attributes of the head node (`name` renames it), values as strings."""
    if len(sym) != 1:
        raise ValueError("_set_attr needs a symbol with one output")
    node = sym.outputs[0][0]
    for k, v in attrs.items():
        if k == "name":
            node.name = str(v)
        else:
            node.attrs[k] = str(v)
            node._parsed = None


def atomic(sym: Symbol) -> Symbol:
    """A new node of the head's operator and attributes, with fresh input variables."""
    head = sym.outputs[0][0]
    if head.is_var:
        raise ValueError("a variable has no operator to generate an atomic symbol from")
    return compose(head.op, [], dict(head.attrs))
