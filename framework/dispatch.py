"""Dispatch: run a registry op on framework arrays (and record it while tracing), or compose it
on Symbols. The front ends (np, npx, gluon layers) call ops only through `invoke`; it sits above
the registry, the array type and the graph, none of which import it."""
from __future__ import annotations

from typing import Any

from .base import MXNetError, OperatorError
from .ndarray import ndarray
from .ops.registry import OpDef, get_op
from .symbol import trace as _trace
from .symbol.graph import Symbol
from .symbol.ops import compose


def invoke(op: OpDef | str, inputs: list, attrs: dict[str, Any] | None = None,
           name: str | None = None):
    """Run `op` on `inputs` (framework arrays, NumPy arrays or Symbols) with Python attr values.

    Returns one array, or a tuple when the op has several visible outputs.
    """
    if isinstance(op, str):
        op = get_op(op)
    attrs = attrs or {}
    a = op.parse_attrs(attrs)
    if any(isinstance(x, Symbol) for x in inputs):
        return compose(op, inputs, attrs, name)
    try:
        res = op.kernel(a, *[x._data if isinstance(x, ndarray) else x for x in inputs])
    except ValueError as e:      # NumPy's complaint, raised as MXNet's error (still a ValueError)
        if isinstance(e, MXNetError):
            raise
        raise OperatorError(f"{op.name}: {e}") from e
    outs = [ndarray(r) for r in res] if isinstance(res, tuple) else [ndarray(res)]
    tracer = _trace.current()
    if tracer is not None:
        tracer.record(op, op.format_attrs(a), inputs, outs, name)
    nvis = op.n_visible(a)
    return outs[0] if nvis == 1 else tuple(outs[:nvis])
