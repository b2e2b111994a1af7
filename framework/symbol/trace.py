"""Tracing (MXNet's "deferred compute"): record the ops a forward runs into a graph.

While a `Tracer` is active on this thread, every registry op called on framework arrays computes
its real result *and* appends a node whose inputs are the entries of its argument arrays. Inputs
and parameters are bound to variable nodes before the forward runs. Because values are real,
`x.shape` and printing work inside a traced forward, exactly as with MXNet 2's deferred compute.
"""
from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Iterator

from ..base import MXNetError
from .graph import Entry, Node, Symbol, _Symbol, new_node_name

_local = threading.local()
PROFILER_SCOPE = "<unk>:"     # MXNet 2.x tags every variable with the (empty) profiler scope


class Tracer:
    def __init__(self):
        self._entries: dict[int, tuple[object, Entry]] = {}  # id(array) -> (array, entry)

    def bind(self, array, entry: Entry) -> None:
        self._entries[id(array)] = (array, entry)   # keeps the array alive: ids stay unique

    def bind_var(self, array, name: str, attrs: dict | None = None) -> Entry:
        e = (Node("null", name, attrs), 0)
        self.bind(array, e)
        return e

    def entry(self, array) -> Entry:
        hit = self._entries.get(id(array))
        if hit is None:
            raise MXNetError(
                "An array used in a hybridized forward is neither an input, a Parameter's data() "
                f"nor the result of an operator (shape {getattr(array, 'shape', '?')}). Create "
                "constants with np ops (np.zeros, np.ones, np.full) or a gluon.Constant.")
        return hit[1]

    def has(self, array) -> bool:
        return id(array) in self._entries

    def record(self, op, attrs: dict[str, str], inputs, outputs, name: str | None = None) -> None:
        if op.profiler_scope:        # invoked the legacy way by MXNet 2.0, which tags the node
            attrs = {**attrs, "__profiler_scope__": PROFILER_SCOPE}
        if _constraints["flags"]:       # recorded under HybridBlock.OptConstraint
            attrs = {**attrs, "__opt_constraint__": str(_constraints["flags"])}
        node = Node(op.name, name or new_node_name(), attrs, [self.entry(x) for x in inputs], op=op)
        for i, out in enumerate(outputs):
            self.bind(out, (node, i))

    def symbol(self, outputs) -> Symbol:
        return _Symbol([self.entry(o) for o in outputs])


_constraints = {"flags": 0}       # optimisation constraints of HybridBlock.OptConstraint


def get_optimization_constraints() -> int:
    return _constraints["flags"]


def set_optimization_constraints(flags: int) -> None:
    _constraints["flags"] = int(flags)


def current() -> Tracer | None:
    return getattr(_local, "tracer", None)


@contextmanager
def tracing(tracer: Tracer | None) -> Iterator[Tracer | None]:
    old = getattr(_local, "tracer", None)
    _local.tracer = tracer
    try:
        yield tracer
    finally:
        _local.tracer = old


def is_deferred_compute() -> bool:
    return current() is not None
