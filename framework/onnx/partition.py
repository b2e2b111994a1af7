"""The `onnxruntime` optimize_for backend: ONNX-expressible regions run by warm ORT sessions
(and the `openvino` backend: the same regions, compiled by OpenVINO — openvino.py).

The graph is split into maximal regions of lowerable nodes (compiler/passes/partition.py); each
region of at least `min_nodes` op nodes becomes one `_sg_onnxruntime` node whose engine
(runtime.py) is built here, once. What cannot be lowered stays on the NumPy kernels. A region
whose lowering fails on what only shapes reveal, or whose session ORT refuses, is cut again
without the node named in the error (or left to NumPy as a whole when no node is named).
"""
from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from typing import Mapping

import numpy as np

from ..heap import trim_heap
from ..base import MXNetError
from ..compiler.engine import OPENVINO, ORT, EngineProbe, register_engine
from ..compiler.passes.partition import Region, contract, expand, find_groups
from ..ops.lowering import OnnxLoweringError
from ..ops.registry import get_op
from ..symbol.backends import register_backend
from ..symbol.graph import Node, Symbol
from ..symbol.infer import _attr_shape, infer_dtypes
from .build import lowerable, refusal
from .deps import require
from .openvino import FEATURE as OV_FEATURE, effective_precision
from .runtime import FEATURE, OrtSubgraph, SessionConfig
from .shapes import graph_shapes, resolved, varying_axes

OP = "_sg_onnxruntime"
_NODE_IN_ERROR = re.compile(r"node '([^']*)' \(op ")


@dataclass
class _Info:
    """Shapes (at the example batch and a doubled one) and dtypes of every entry of the graph."""
    shapes: dict
    alt: dict | None
    dtypes: dict


class _Refused(Exception):
    def __init__(self, node_ids: set[int]):
        self.node_ids = node_ids


@register_backend("onnxruntime", "ORT")
def partition_onnxruntime(sym: Symbol, args: Mapping | None = None, aux: Mapping | None = None,
                          data_shapes: Mapping[str, tuple] | None = None,
                          data_dtypes: Mapping[str, object] | None = None,
                          providers=None, intra_op_threads: int = 0, spinning: bool = True,
                          min_nodes: int = 1, shape_cache: int = 0, verify_bound: float = 0.0,
                          **_) -> tuple[Symbol, dict, dict]:
    """The `onnxruntime` (alias `ORT`) optimize_for backend: maximal ONNX-expressible regions
    become subgraph nodes run by warm ONNX Runtime sessions; returns `(graph with subgraph
    nodes, args, aux)`, parameters unchanged (names kept). Options: `providers`,
    `intra_op_threads` (0: the framework's setting, else OMP_NUM_THREADS, else all cores),
    `spinning`, `min_nodes`, `shape_cache` (shape specializations kept per region; 0:
    HYBRIDSERVE_ORT_SHAPE_CACHE, else 4), `verify_bound` (> 0: a session built for new shapes
    must reproduce the NumPy kernels within max|Δ| ≤ bound·max(1, max|ref|) on the inputs that
    asked for it, else those shapes run on NumPy). Needs the `onnxruntime` package."""
    require("onnxruntime", FEATURE)
    config = SessionConfig(tuple(providers) if providers else None, int(intra_op_threads),
                           bool(spinning), shape_cache=int(shape_cache),
                           verify_bound=float(verify_bound))
    return _partition(sym, args, aux, data_shapes, data_dtypes, min_nodes, config)


@register_backend("openvino", "OpenVINO")
def partition_openvino(sym: Symbol, args: Mapping | None = None, aux: Mapping | None = None,
                       data_shapes: Mapping[str, tuple] | None = None,
                       data_dtypes: Mapping[str, object] | None = None,
                       precision: str = "f32", intra_op_threads: int = 0, min_nodes: int = 1,
                       shape_cache: int = 0, verify_bound: float = 0.0,
                       **_) -> tuple[Symbol, dict, dict]:
    """The `openvino` optimize_for backend: the same regions and ONNX lowering as
    `onnxruntime`, each compiled by OpenVINO for the CPU (openvino.py). Options: `precision`
    ("f32", or "bf16": OpenVINO's precision hint, f32 with a warning on a CPU without native
    bf16; the subgraph engines' `precision`/`precision_reason` say what runs), and
    `intra_op_threads`, `min_nodes`, `shape_cache`, `verify_bound` as for `onnxruntime`. Needs
    the `openvino` package (`pip install hybridserve[openvino]`)."""
    require("openvino", OV_FEATURE)
    require("onnx", OV_FEATURE)
    effective_precision(precision)          # an unknown precision fails before any build
    config = SessionConfig(None, int(intra_op_threads), shape_cache=int(shape_cache),
                           verify_bound=float(verify_bound), engine="openvino",
                           precision=precision)
    return _partition(sym, args, aux, data_shapes, data_dtypes, min_nodes, config)


def _partition(sym: Symbol, args: Mapping | None, aux: Mapping | None,
               data_shapes: Mapping | None, data_dtypes: Mapping | None, min_nodes: int,
               config: SessionConfig) -> tuple[Symbol, dict, dict]:
    sym = expand(sym)                 # optimising again starts from the original nodes
    args, aux = dict(args or {}), dict(aux or {})
    params = {k: np.asarray(v) for k, v in {**args, **aux}.items()}
    info = _entry_info(sym, params, data_shapes or {}, data_dtypes or {})
    excluded: set[int] = set()
    while True:
        groups = [g for g in find_groups(sym, lambda n: id(n) not in excluded and _takes(n))
                  if sum(not m.is_var for m in g) >= max(1, int(min_nodes))]
        try:
            out = contract(sym, groups, lambda r, k: _subgraph_node(r, k, params, info, config))
        except _Refused as r:
            excluded |= r.node_ids
            continue
        trim_heap()
        return out, args, aux


def _takes(n: Node) -> bool:
    # a node with a subgraph is taken only when the subgraph is its configuration (fused ops)
    return (not n.subgraphs or n.op.subgraph_attrs is not None) and lowerable(n)


def _refusal(n: Node) -> str | None:
    """Why the partitioner leaves `n` to NumPy (None: it takes it): select_engine's probe."""
    if _takes(n):
        return None
    if n.subgraphs and n.op.subgraph_attrs is None:
        return "control-flow subgraphs stay on NumPy"
    return refusal(n) or "the op does not lower to ONNX"


register_engine(ORT, EngineProbe(_refusal))
register_engine(OPENVINO, EngineProbe(_refusal, effective_precision))


def _entry_info(sym: Symbol, params: dict, data_shapes: Mapping, data_dtypes: Mapping) -> _Info:
    known = {k: v.shape for k, v in params.items()}
    data = []
    for n in sym.topo():
        if n.is_var and n.name not in params:
            shape = data_shapes.get(n.name) or _attr_shape(n)
            if shape is None:
                raise MXNetError(f"{FEATURE} needs the shape of input '{n.name}' "
                                 "(call it with example inputs, or pass data_shapes)")
            known[n.name] = tuple(shape)
            data.append(n.name)
    shp, alt, attrs, unresolved = graph_shapes(sym, known, data, True)
    kdt = {**{k: v.dtype for k, v in params.items()},
           **{k: np.dtype(data_dtypes.get(k, np.float32)) for k in data}}
    with resolved(unresolved, attrs):
        dts = infer_dtypes(sym, kdt)
    return _Info(shp, alt, dts)


def _subgraph_node(region: Region, k: int, params: dict, info: _Info,
                   config: SessionConfig) -> Node:
    sub = region.symbol
    names = sub.list_inputs()
    feeds = [(n, e) for n, e in zip(names, region.inputs) if n not in params]
    shapes = {n: info.shapes[(id(s), i)] for n, (s, i) in feeds}
    dtypes = {n: info.dtypes.get((id(s), i)) for n, (s, i) in feeds}
    dtypes = {n: d for n, d in dtypes.items() if d is not None}
    dynamic = info.alt is not None and all(
        varying_axes(info.shapes[(id(s), i)], info.alt.get((id(s), i))) == (0,)
        for _, (s, i) in feeds)
    name = f"{config.engine}_subgraph{k}"
    try:
        engine = OrtSubgraph(name, sub, {n: params[n] for n in names if n in params},
                             shapes, dtypes, dynamic, config)
    except OnnxLoweringError as e:
        raise _Refused(_named(str(e), region)) from None
    except Exception as e:  # noqa: BLE001 - ORT's own exception types: leave it to NumPy
        warnings.warn(f"{config.engine} refused a region of {len(region.members)} nodes "
                      f"('{region.members[0].name}' …): {e}; it runs on NumPy", stacklevel=4)
        raise _Refused({id(m) for m in region.members}) from None
    node = Node(OP, name, {"num_inputs": str(len(names)), "num_outputs": str(len(sub.outputs)),
                           "engine": config.engine}, op=get_op(OP))
    node.parsed["runner"] = engine
    return node


def _named(message: str, region: Region) -> set[int]:
    """The outer node named by a lowering error, or every node of the region."""
    m = _NODE_IN_ERROR.search(message)
    hit = [n for n in region.members if m and n.name == m.group(1)]
    return {id(n) for n in (hit or region.members)}
