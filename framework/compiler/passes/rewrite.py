"""Graph copying with substitutions — the one helper every pass uses to rebuild a graph."""
from __future__ import annotations

from typing import Callable

from ...symbol.graph import Node, Symbol

Entry = tuple


def rebuild(sym: Symbol, visit: Callable[[Node, list[Entry], dict], list[Entry] | None]) -> Symbol:
    """Copy `sym` node by node. `visit(old_node, new_inputs, new_entries_of)` may return the
    replacement entries for the node's outputs (a rewrite) or None to copy the node unchanged.
    `new_entries_of[id(old)]` gives the new output entries of an already visited node."""
    done: dict[int, list[Entry]] = {}
    for n in sym.topo():
        ins = [done[id(src)][i] for src, i in n.inputs]
        repl = visit(n, ins, done)
        if repl is None:
            c = Node(n.opname, n.name, n.attrs, op=n.op)
            c.inputs = ins
            c.control_deps = [done[id(d)][0][0] for d in n.control_deps]
            c.subgraphs = n.subgraphs
            c._parsed = n._parsed
            repl = [(c, i) for i in range(n.num_outputs())]
        done[id(n)] = repl
    return Symbol([done[id(n)][i] for n, i in sym.outputs])


def consumers(sym: Symbol) -> dict[int, int]:
    """How many times each node's outputs are read (graph outputs count as reads)."""
    count: dict[int, int] = {}
    for n in sym.topo():
        for src, _ in n.inputs:
            count[id(src)] = count.get(id(src), 0) + 1
    for n, _ in sym.outputs:
        count[id(n)] = count.get(id(n), 0) + 1
    return count
