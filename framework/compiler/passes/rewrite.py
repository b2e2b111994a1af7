"""Graph copying with substitutions — the one helper every pass uses to rebuild a graph."""
from __future__ import annotations

from typing import Callable

from ...symbol.graph import Node, Symbol

Entry = tuple


def copy_node(n: Node, ins: list[Entry], done: dict, attrs: dict | None = None) -> Node:
    """A copy of `n` reading `ins` (its control dependencies mapped through `done`); new
    `attrs`, if given, are parsed afresh."""
    c = Node(n.opname, n.name, n.attrs if attrs is None else attrs, op=n.op)
    c.inputs = list(ins)
    c.control_deps = [done[id(d)][0][0] for d in n.control_deps]
    c.subgraphs = n.subgraphs
    if attrs is None:
        c._parsed = n._parsed
    return c


def variant(n: Node, ins: list[Entry], **attrs) -> Node:
    """An already rebuilt node `n` once more, reading `ins`, with `attrs` set (as strings)."""
    c = Node(n.opname, n.name, {**n.attrs, **{k: str(v) for k, v in attrs.items()}}, ins, op=n.op)
    c.control_deps = list(n.control_deps)
    c.subgraphs = n.subgraphs
    return c


def entries(node: Node, k: int) -> list[Entry]:
    """The first `k` output entries of `node`."""
    return [(node, i) for i in range(k)]


def rebuild(sym: Symbol, visit: Callable[[Node, list[Entry], dict], list[Entry] | None],
            output: Callable[[Entry], Entry] | None = None) -> Symbol:
    """Copy `sym` node by node. `visit(old_node, new_inputs, new_entries_of)` may return the
    replacement entries for the node's outputs (a rewrite) or None to copy the node unchanged.
    `new_entries_of[id(old)]` gives the new output entries of an already visited node.
    `output`, if given, maps each new graph output entry (e.g. back to a layout)."""
    done: dict[int, list[Entry]] = {}
    for n in sym.topo():
        ins = [done[id(src)][i] for src, i in n.inputs]
        repl = visit(n, ins, done)
        if repl is None:
            repl = entries(copy_node(n, ins, done), n.num_outputs())
        done[id(n)] = repl
    outs = [done[id(n)][i] for n, i in sym.outputs]
    return Symbol([output(e) for e in outs] if output is not None else outs)


def consumers(sym: Symbol) -> dict[int, int]:
    """How many times each node's outputs are read (graph outputs count as reads)."""
    count: dict[int, int] = {}
    for n in sym.topo():
        for src, _ in n.inputs:
            count[id(src)] = count.get(id(src), 0) + 1
    for n, _ in sym.outputs:
        count[id(n)] = count.get(id(n), 0) + 1
    return count
