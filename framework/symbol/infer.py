"""Shape and dtype inference over a graph, driven by each OpDef's rules.

Forward only, except for parameters: when an op's weight/bias/gamma… variables have no known
shape, the op's `infer_param_shapes` fills them from the data shape (how a SymbolBlock without a
params file, or a deferred Parameter, gets its shape).
"""
from __future__ import annotations

import ast

import numpy as np

from ..base import OperatorError, ShapeError
from ..io.dtypes import dtype_from_flag, held_dtype
from ..ops.common import same_shape
from ..ops.registry import DataDependentShape
from .graph import Node, Symbol


def _partial_attr_shape(node: Node) -> tuple | None:
    """A variable's declared `__shape__`, 0 standing for an unknown dimension."""
    s = node.attrs.get("__shape__")
    if not s:
        return None
    try:
        return tuple(int(d) for d in ast.literal_eval(s.replace("L", "")))
    except (ValueError, SyntaxError, TypeError):
        return None


def _attr_shape(node: Node):
    """A variable's declared shape when fully known (graphs keep partial ones unknown: a 1.x
    file's `(0, 3, 224, 224)` leaves the batch size to the input signature)."""
    t = _partial_attr_shape(node)
    return t if t is not None and all(d > 0 for d in t) else None


def infer_shapes(sym: Symbol, known: dict[str, tuple], *,
                 tolerant: bool = False) -> dict[tuple[int, int], tuple | None]:
    """Shape of every entry `(id(node), output)`; None where unknown.

    `tolerant=True` (summaries, graph views, limit checks): a node whose shapes cannot be
    inferred becomes unknown, with what depends on it, instead of raising. Variables whose
    shapes are learnt from a sibling input (`_from_sibling`) feed one more pass, so ops that
    read them before that node see them too."""
    shapes = _one_pass(sym, known, tolerant)
    for _ in range(3):
        learnt = {n.name: shapes[(id(n), 0)] for n in sym._vars()
                  if shapes.get((id(n), 0)) is not None and n.name not in known}
        if not learnt or all(_attr_shape(n) is not None for n in sym._vars() if n.name in learnt):
            break
        known = {**known, **learnt}
        shapes = _one_pass(sym, known, tolerant)
    return shapes


def _one_pass(sym: Symbol, known: dict[str, tuple], tolerant: bool) -> dict:
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
            if s is None and f is not None:
                _fill_backwards(src, i, tuple(f), shapes)
        ins = [shapes.get((id(src), i)) for src, i in n.inputs]
    if any(s is None for s in ins):
        return _from_sibling(n, ins, shapes)
    try:
        return list(n.op.shapes(n.parsed, ins))
    except DataDependentShape:
        return None         # the input values decide (unique, nonzero…): unknown, not guessed
    except Exception as e:  # noqa: BLE001
        raise ShapeError(f"node '{n.name}' (op {n.opname}) cannot take input shapes {ins}: {e}") from None


def _fill_backwards(src: Node, i: int, shape: tuple, shapes: dict) -> None:
    """Give an unknown parameter its shape, through the shape-preserving one-input ops between
    it and its consumer (`Convolution(weight=cast(w))` fills `w`, as MXNet's backward pass does)."""
    while True:
        shapes[(id(src), i)] = shape
        if src.is_var or len(src.inputs) != 1 or not (
                src.op.infer_shape is same_shape or src.op.is_elementwise(src.parsed)):
            return
        src, i = src.inputs[0]
        if shapes.get((id(src), i)) is not None:
            return


def _from_sibling(n: Node, ins: list, shapes: dict) -> list | None:
    """An elementwise node with some inputs unknown: when giving them a known input's shape
    makes the op return that same shape, that is the output shape, and unknown *variables*
    among the inputs take it too (MXNet infers `elemwise_add(x, v)`'s `v` backwards)."""
    known = next((s for s in ins if s is not None), None)
    if known is None or len(ins) < 2 or n.num_outputs() != 1:
        return None
    try:
        outs = list(n.op.shapes(n.parsed, [s if s is not None else known for s in ins]))
    except Exception:  # noqa: BLE001  (not elementwise: stays unknown)
        return None
    if [tuple(o) for o in outs] != [tuple(known)]:
        return None
    for (src, i), s in zip(n.inputs, ins):
        if s is None and src.is_var:
            shapes[(id(src), i)] = tuple(known)
    return outs


def infer_shape(sym: Symbol, *args, _as_dict: bool = False, _partial: bool = False, **kwargs):
    """MXNet's `Symbol.infer_shape`: (arg_shapes, out_shapes, aux_shapes), or (None, None, None)
    when some shape stays unknown; `_partial=True` (`infer_shape_partial`) gives `()` for those."""
    known = {k: v for k, v in kwargs.items() if v is not None}
    if args:
        known.update({n: s for n, s in zip(sym.list_arguments(), args) if s is not None})
    nodes = {n.name: n for n in sym.topo() if n.is_var}
    shapes = infer_shapes(sym, known)
    # declared shapes with unknown (0) dims, used only where nothing better was inferred
    partial = [name for name, n in nodes.items() if shapes[(id(n), 0)] is None
               and _partial_attr_shape(n) and _attr_shape(n) is None]
    if partial:
        try:
            shapes = {k: None if s is None else tuple(max(d, 0) for d in s)  # unknown dims: 0
                      for k, s in infer_shapes(sym, {**known, **{
                          name: _partial_attr_shape(nodes[name]) for name in partial}}).items()}
        except ShapeError:
            # a declared partial shape an op cannot take (an INT8 export's fused node sizes
            # its weights itself): the graph's own inference stands
            partial = []
    if _as_dict:
        return {name: shapes[(id(n), 0)] for name, n in nodes.items()}
    arg = [shapes[(id(nodes[a]), 0)] for a in sym.list_arguments()]
    aux = [shapes[(id(nodes[a]), 0)] for a in sym.list_auxiliary_states()]
    out = [shapes.get((id(n), i)) for n, i in sym.outputs]
    if _partial:
        return tuple([() if s is None else s for s in part] for part in (arg, out, aux))
    if any(s is None or (partial and 0 in s) for part in (arg, out, aux) for s in part):
        return None, None, None
    return arg, out, aux


def infer_dtypes(sym: Symbol, known: dict[str, np.dtype]) -> dict[tuple[int, int], np.dtype]:
    dts: dict[tuple[int, int], np.dtype] = {}
    for n in sym.topo():
        if n.is_var:
            if n.name in known:
                dts[(id(n), 0)] = np.dtype(known[n.name])
            elif "__dtype__" in n.attrs:
                dts[(id(n), 0)] = held_dtype(dtype_from_flag(int(n.attrs["__dtype__"])))
            else:
                dts[(id(n), 0)] = None
            continue
        ins = [dts.get((id(src), i)) for src, i in n.inputs]
        if n.op.input_dtypes is not None and None in ins:
            fixed = n.op.input_dtypes(n.parsed, n.op.input_names(n.parsed))
            ins = [d if d is not None else f for d, f in zip(ins, fixed)]
        # parameters default to the data dtype (MXNet's backward type propagation)
        ins = [d if d is not None else (ins[0] if ins and ins[0] is not None else np.dtype(np.float32))
               for d in ins]
        for (src, i), d in zip(n.inputs, ins):
            if src.is_var and dts.get((id(src), i)) is None:
                dts[(id(src), i)] = d
        try:
            outs = n.op.dtypes(n.parsed, ins)
        except OperatorError as e:   # a float-only op given integer data: say which node
            raise OperatorError(f"node {n.name}: {e}") from e
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
