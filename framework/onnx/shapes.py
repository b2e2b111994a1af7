"""Static shapes for lowering, and which axes follow a dynamic batch.

Shapes are inferred twice: at the given input shapes and with every data input's leading axis
doubled. An axis whose size differs between the two follows the batch; a lowering that must
write a shape into the graph (Reshape targets, zeros of MXNet 1.x `_zeros((0, H))` states) writes
those axes from the runtime batch instead. A graph whose inference fails at the doubled batch is
not batch-polymorphic: its inputs keep their static leading axis.
"""
from __future__ import annotations

from contextlib import contextmanager

from ..compiler.passes.unknown_dims import resolve, unresolved_nodes
from ..symbol.infer import infer_shapes


@contextmanager
def resolved(nodes: list, attrs: dict):
    """Give MXNet 1.x creation nodes with unknown (0) dims concrete attrs for a while."""
    saved = [(n, n._parsed) for n in nodes]
    try:
        for n in nodes:
            n._parsed = attrs[id(n)]
        yield
    finally:
        for n, p in saved:
            n._parsed = p


def _infer(symbol, known: dict, nodes: list, data: dict) -> tuple[dict, dict]:
    attrs = resolve(symbol, nodes, data) if nodes else {}
    with resolved(nodes, attrs):
        return infer_shapes(symbol, known), attrs


def graph_shapes(symbol, known: dict, data: list[str], dynamic_batch: bool):
    """(shapes, alternate shapes or None, resolved creation attrs, unresolved nodes)."""
    nodes = unresolved_nodes(symbol.topo())
    shp, attrs = _infer(symbol, known, nodes, {k: known[k] for k in data if k in known})
    alt = None
    if dynamic_batch and data:
        known2 = dict(known)
        for k in data:
            if known.get(k):
                known2[k] = (2 * known[k][0],) + tuple(known[k][1:])
        try:
            alt = _infer(symbol, known2, nodes, {k: known2[k] for k in data if k in known2})[0]
        except (ValueError, ArithmeticError):
            alt = None
    return shp, alt, attrs, nodes


def varying_axes(shape, alt_shape) -> tuple[int, ...]:
    if shape is None or alt_shape is None or len(shape) != len(alt_shape):
        return ()
    return tuple(i for i, (a, b) in enumerate(zip(shape, alt_shape)) if a != b)
