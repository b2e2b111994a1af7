"""MXNet's `_deferred_compute` API over the tracer: mark arrays as graph inputs
(`set_variable`), record what runs inside `context()`, and read the graph back (`get_symbol`),
also after the context closed. One recording per thread."""
from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Iterator

from .base import MXNetError
from .symbol import trace
from .symbol.graph import Symbol

_local = threading.local()


def _tracer() -> trace.Tracer:
    t = getattr(_local, "tracer", None)
    if t is None:
        t = _local.tracer = trace.Tracer()
    return t


def is_deferred_compute() -> bool:
    return trace.current() is not None


@contextmanager
def context(state: bool = True) -> Iterator[None]:
    with trace.tracing(_tracer() if state else None):
        yield


def set_variable(arrays, variables) -> None:
    """Bind each array to a variable symbol: ops on it inside `context()` read that variable."""
    arrays = arrays if isinstance(arrays, (list, tuple)) else [arrays]
    variables = variables if isinstance(variables, (list, tuple)) else [variables]
    t = _tracer()
    for a, v in zip(arrays, variables):
        if t.has(a):
            raise MXNetError("set_variable: this array is already bound to a variable")
        t.bind(a, v.outputs[0])


def get_symbol(output_arrays, *, sym_cls=Symbol) -> Symbol:
    """The graph computing `output_arrays` from the bound variables."""
    outs = output_arrays if isinstance(output_arrays, (list, tuple)) else [output_arrays]
    return sym_cls([_tracer().entry(a) for a in outs])
