"""Shape and dtype inference over a graph, driven by each OpDef's rules.

Forward only, except for parameters: when an op's weight/bias/gamma… variables have no known
shape, the op's `infer_param_shapes` fills them from the data shape (how a SymbolBlock without a
params file, or a deferred Parameter, gets its shape).
"""
from __future__ import annotations

import ast

import numpy as np

from ..base import ShapeError
from ..io.dtypes import dtype_from_flag
from .graph import Node, Symbol


def _attr_shape(node: Node):
    s = node.attrs.get("__shape__")
    if not s:
        return None
    try:
        t = tuple(int(d) for d in ast.literal_eval(s.replace("L", "")))
    except (ValueError, SyntaxError, TypeError):
        return None
    return t if all(d > 0 for d in t) else None


def infer_shapes(sym: Symbol, known: dict[str, tuple], *,
                 tolerant: bool = False) -> dict[tuple[int, int], tuple | None]:
    """Shape of every entry `(id(node), output)`; None where unknown.

    `tolerant=True` (summaries, graph views, limit checks): a node whose shapes cannot be
    inferred becomes unknown, with what depends on it, instead of raising."""
    shapes: dict[tuple[int, int], tuple | None] = {}
    for n in sym.topo():
        if n.is_var:
            shp = known.get(n.name)
            shapes[(id(n), 0)] = tuple(shp) if shp is not None else _attr_shape(n)
            continue
        try:
            outs = _node_shapes(n, shapes)
        except ShapeError:
            if not tolerant:
                raise
            outs = None
        for i in range(n.num_outputs()):
            shapes[(id(n), i)] = tuple(outs[i]) if outs and i < len(outs) and outs[i] is not None \
                else None
    return shapes


def _node_shapes(n, shapes: dict) -> list | None:
    """Output shapes of op node `n`, filling unknown parameter shapes from the data shape."""
    ins = [shapes.get((id(src), i)) for src, i in n.inputs]
    if any(s is None for s in ins) and n.op.infer_param_shapes is not None and ins and ins[0] is not None:
        try:
            filled = n.op.infer_param_shapes(n.parsed, ins)
        except Exception as e:  # noqa: BLE001
            raise ShapeError(f"node '{n.name}' (op {n.opname}): cannot infer parameter shapes "
                             f"from input shape {ins[0]}: {e}") from None
        for (src, i), s, f in zip(n.inputs, ins, filled):
            if s is None and f is not None and src.is_var:
                shapes[(id(src), i)] = tuple(f)
        ins = [shapes.get((id(src), i)) for src, i in n.inputs]
    if any(s is None for s in ins):
        return None
    try:
        return list(n.op.shapes(n.parsed, ins))
    except Exception as e:  # noqa: BLE001
        raise ShapeError(f"node '{n.name}' (op {n.opname}) cannot take input shapes {ins}: {e}") from None


def infer_shape(sym: Symbol, *args, _as_dict: bool = False, **kwargs):
    """MXNet's `Symbol.infer_shape`: (arg_shapes, out_shapes, aux_shapes)."""
    known = dict(kwargs)
    if args:
        known.update({n: s for n, s in zip(sym.list_arguments(), args) if s is not None})
    shapes = infer_shapes(sym, known)
    nodes = {n.name: n for n in sym.topo() if n.is_var}
    if _as_dict:
        return {name: shapes[(id(n), 0)] for name, n in nodes.items()}
    arg = [shapes[(id(nodes[a]), 0)] for a in sym.list_arguments()]
    aux = [shapes[(id(nodes[a]), 0)] for a in sym.list_auxiliary_states()]
    out = [shapes.get((id(n), i)) for n, i in sym.outputs]
    return arg, out, aux


def infer_dtypes(sym: Symbol, known: dict[str, np.dtype]) -> dict[tuple[int, int], np.dtype]:
    dts: dict[tuple[int, int], np.dtype] = {}
    for n in sym.topo():
        if n.is_var:
            if n.name in known:
                dts[(id(n), 0)] = np.dtype(known[n.name])
            elif "__dtype__" in n.attrs:
                dts[(id(n), 0)] = np.dtype(dtype_from_flag(int(n.attrs["__dtype__"])))
            else:
                dts[(id(n), 0)] = None
            continue
        ins = [dts.get((id(src), i)) for src, i in n.inputs]
        # parameters default to the data dtype (MXNet's backward type propagation)
        ins = [d if d is not None else (ins[0] if ins and ins[0] is not None else np.dtype(np.float32))
               for d in ins]
        for (src, i), d in zip(n.inputs, ins):
            if src.is_var and dts.get((id(src), i)) is None:
                dts[(id(src), i)] = d
        outs = n.op.dtypes(n.parsed, ins)
        for i in range(n.num_outputs()):
            dts[(id(n), i)] = np.dtype(outs[i]) if i < len(outs) and outs[i] is not None else None
    return dts


def infer_type(sym: Symbol, *args, _as_dict: bool = False, **kwargs):
    known = dict(kwargs)
    if args:
        known.update({n: t for n, t in zip(sym.list_arguments(), args) if t is not None})
    dts = infer_dtypes(sym, known)
    nodes = {n.name: n for n in sym.topo() if n.is_var}
    if _as_dict:
        return {name: dts[(id(n), 0)] for name, n in nodes.items()}
    return ([dts[(id(nodes[a]), 0)] for a in sym.list_arguments()],
            [dts.get((id(n), i)) for n, i in sym.outputs],
            [dts[(id(nodes[a]), 0)] for a in sym.list_auxiliary_states()])
