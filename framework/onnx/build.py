"""`lower_symbol`: a whole Symbol (or a partition's subgraph) → one ONNX ModelProto."""
from __future__ import annotations

from typing import Mapping

import numpy as np

from ..base import MXNetError
from ..compiler.passes.unknown_dims import unresolved_nodes
from ..symbol.graph import Node, Symbol, rename_vars
from ..symbol.infer import infer_dtypes
from .context import DEFAULT_OPSET, LoweringContext
from ..ops.lowering import OnnxLoweringError, Unsupported
from .shapes import graph_shapes, resolved, varying_axes

BATCH = "batch"          # the symbolic name of a dynamic leading axis


def refusal(node: Node) -> str | None:
    """Why `node` cannot be lowered (from its op and attrs alone), or None when it can."""
    if node.is_var:
        return None
    low = getattr(node.op, "onnx", None)
    if low is None:
        return "the op has no ONNX lowering"
    try:
        return low.refusal(node.parsed)
    except MXNetError as e:
        return str(e)


def lowerable(node: Node) -> bool:
    """Whether `lower_symbol` can lower `node` (shape-dependent refusals aside)."""
    return refusal(node) is None


def _error(node: Node, reason: str) -> OnnxLoweringError:
    return OnnxLoweringError(f"node '{node.name}' (op {node.opname}) cannot be lowered to "
                             f"ONNX: {reason}")


def lower_symbol(symbol: Symbol, params: Mapping[str, np.ndarray],
                 shapes: Mapping[str, tuple], dtypes: Mapping[str, object] | None = None, *,
                 dynamic_batch: bool = True, opset: int = DEFAULT_OPSET,
                 graph_name: str = "hybridserve"):
    """The ONNX model of `symbol`.

    Variables named in `params` become initializers (their names kept); the others are graph
    inputs of the shapes in `shapes` (dtype from `dtypes`, else inferred, else float32), with a
    symbolic leading axis when `dynamic_batch`. Outputs are named `symbol.list_outputs()`.
    Raises OnnxLoweringError naming the first node (and op) that cannot be lowered.
    """
    ctx = LoweringContext(opset)              # raises MissingDependencyError without onnx
    if unresolved_nodes(symbol.topo()):
        # a private copy of the nodes: their resolved attrs never touch a graph others run
        symbol = rename_vars(symbol, {})
    known = {**{k: tuple(np.shape(v)) for k, v in params.items()}, **dict(shapes)}
    kdt = {**{k: np.asarray(v).dtype for k, v in params.items()}, **dict(dtypes or {})}
    data = [n.name for n in symbol.topo() if n.is_var and n.name not in params]
    try:
        shp, alt, attrs, unresolved = graph_shapes(symbol, known, data, dynamic_batch)
        with resolved(unresolved, attrs):
            dts = infer_dtypes(symbol, kdt)
    except (MXNetError, ValueError) as e:
        raise OnnxLoweringError(f"cannot lower to ONNX: {e}") from None
    ctx.dynamic_batch = alt is not None
    with resolved(unresolved, attrs):
        return _build(ctx, symbol, params, (shp, alt or {}, dts), graph_name)


def _build(ctx, symbol, params, info, graph_name):
    values: dict[tuple[int, int], str] = {}
    inputs = []
    for node in symbol.topo():
        if node.is_var:
            inputs += _lower_var(ctx, node, params, info, values)
        else:
            _lower_node(ctx, node, info, values)
    outputs = _outputs(ctx, symbol, values, info)
    ctx.materialize()
    used = {n for node in ctx.nodes for n in node.input}
    inputs = [i for i in inputs if i.name in used]     # e.g. SoftmaxOutput's label
    h = ctx.helper
    graph = h.make_graph(ctx.nodes, graph_name, inputs, outputs)
    ctx.write_initializers(graph, [n for n in ctx.initializers if n in used])  # not fix_gamma's
    return h.make_model(graph, opset_imports=[h.make_opsetid("", ctx.opset)],
                        producer_name="hybridserve")


def _bind(ctx, name, key, info) -> None:
    shp, alt, dts = info
    ctx.bind(name, shp.get(key), dts.get(key), varying_axes(shp.get(key), alt.get(key)))


def _lower_var(ctx, node, params, info, values) -> list:
    name = ctx.reserve(node.name)
    key = (id(node), 0)
    values[key] = name
    if node.name in params:
        arr = np.asarray(params[node.name])
        ctx.add_initializer(name, arr)
        ctx.bind(name, arr.shape, arr.dtype)
        return []
    shape = info[0].get(key)
    if shape is None:
        raise OnnxLoweringError(f"cannot lower to ONNX: the shape of input '{node.name}' is "
                                "not given")
    _bind(ctx, name, key, info)
    dt = ctx.dtype(name)
    if ctx.dynamic_batch and ctx.batch_source is None and len(shape):
        ctx.batch_source, ctx.static_batch = name, shape[0]
    dims = [BATCH if (i == 0 and ctx.dynamic_batch) else d for i, d in enumerate(shape)]
    return [ctx.helper.make_tensor_value_info(name, ctx.tensor_type(dt), dims)]


def _lower_node(ctx, node, info, values) -> None:
    why = refusal(node)
    if why is not None:
        raise _error(node, why)
    ins = []
    for src, i in node.inputs:
        if (id(src), i) not in values:
            raise _error(node, f"its input {i} of node '{src.name}' is an output ONNX lacks")
        ins.append(values[(id(src), i)])
    ctx.prefix = node.name or node.opname
    shp, alt, dts = info
    keys = [(id(node), i) for i in range(node.num_outputs())]
    ctx.out_shapes = [shp.get(k) for k in keys]
    ctx.out_varying = [varying_axes(shp.get(k), alt.get(k)) for k in keys]
    ctx.out_dtypes = [dts.get(k) for k in keys]
    try:
        outs = _fold(ctx, node, ins) or node.op.onnx.fn(ctx, node, ins)
    except Unsupported as e:
        raise _error(node, str(e)) from None
    outs = [outs] if isinstance(outs, str) else list(outs)
    for i, name in enumerate(outs):
        values[(id(node), i)] = name
        _bind(ctx, name, (id(node), i), info)


def _fold(ctx, node, ins) -> list[str] | None:
    """A node whose inputs are all constants (parameters being repacked: RNN weights reshaped
    and concatenated) becomes constants, computed by its NumPy kernel."""
    vals = [ctx.value(v) for v in ins]
    if not ins or any(v is None for v in vals):
        return None
    outs = node.op.kernel(node.parsed, *vals)
    outs = outs if isinstance(outs, tuple) else (outs,)
    return [ctx.const(np.asarray(o), hint="folded") for o in outs]


def _outputs(ctx, symbol, values, info) -> list:
    shp, _, dts = info
    outs = []
    ctx.prefix = "output"
    for (node, i), name in zip(symbol.outputs, symbol.list_outputs()):
        if (id(node), i) not in values:
            raise _error(node, f"its output {i} is not produced by its lowering")
        final = ctx.fresh(name) if ctx.taken(name) else ctx.reserve(name)
        ctx.nodes.append(ctx.helper.make_node("Identity", [values[(id(node), i)]], [final],
                                              name=ctx.fresh("output")))
        dt = dts.get((id(node), i)) or np.dtype(np.float32)
        shape = shp.get((id(node), i))           # rank only: the sizes may follow the batch
        dims = None if shape is None else [None] * len(shape)
        outs.append(ctx.helper.make_tensor_value_info(final, ctx.tensor_type(dt), dims))
    return outs
