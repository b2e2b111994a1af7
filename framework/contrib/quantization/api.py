"""`quantize_net`: MXNet 1.9.1's user API — a float HybridBlock in, an INT8 SymbolBlock out.

The steps are MXNet's (its CPU path): export the network's graph (1.x operators), fuse conv/FC
chains into oneDNN subgraph nodes (fuse.py), decide which nodes run INT8 (graph.plan), run the
fused float graph over the calibration data collecting each needed layer output's statistics
(calibrate.py), build the quantized graph with the calibrated ranges (graph.build) and quantize
FC weights offline. The result is the graph real MXNet 1.9.1's `quantize_net` returns.
"""
from __future__ import annotations

import inspect
import logging
from typing import Any, Iterable

import numpy as np

from ...base import MXNetError
from ...gluon.symbol_block import SymbolBlock
from ...ndarray import ndarray
from ...ops.registry import get_op
from ...symbol.graph import Group, Symbol, var
from ...symbol.legacy_export import legacy_op_for, to_legacy
from . import graph as qgraph
from .calibrate import HistogramCollector, MinMaxCollector
from .data import as_numpy, batches
from .fuse import fuse_for_quantization

DTYPES = ("auto", "int8", "uint8")
MODES = ("full", "smart")
CALIB_MODES = ("none", "naive", "entropy", "customize")


class QuantizationError(MXNetError, ValueError):
    """A bad argument to `quantize_net` (the message names it)."""


def _check_args(quantized_dtype, quantize_mode, calib_mode, calib_data, data_shapes,
                num_calib_examples, collector, lists: dict) -> None:
    if quantized_dtype not in DTYPES:
        raise QuantizationError(f"unknown quantized_dtype {quantized_dtype!r}, expected "
                                "'int8', 'uint8' or 'auto'")
    if quantize_mode not in MODES:
        raise QuantizationError(f"unknown quantize_mode {quantize_mode!r}, expected 'full' or 'smart'")
    if calib_mode not in CALIB_MODES:
        raise QuantizationError(f"unknown calib_mode {calib_mode!r}, expected 'none', 'naive', "
                                "'entropy' or 'customize'")
    if calib_mode == "customize" and collector is None:
        raise QuantizationError("calib_mode='customize' needs a LayerOutputCollector")
    if calib_mode != "none" and calib_data is None:
        raise QuantizationError(f"calib_data must be provided when calib_mode={calib_mode}")
    if calib_data is None and not data_shapes:
        raise QuantizationError("data_shapes required (or calib_data to take them from)")
    if num_calib_examples is not None and (not isinstance(num_calib_examples, int)
                                           or num_calib_examples <= 0):
        raise QuantizationError(f"num_calib_examples must be a positive int, got "
                                f"{num_calib_examples!r}")
    for name, v in lists.items():
        if v is not None and (not isinstance(v, (list, tuple))
                              or not all(isinstance(s, str) for s in v)):
            raise QuantizationError(f"{name} must be a list of strings, got {v!r}")


def _shape_of(desc: Any) -> tuple:
    """A DataDesc, a (name, shape) pair or a shape."""
    if hasattr(desc, "shape"):
        return tuple(desc.shape)
    if isinstance(desc, (list, tuple)) and len(desc) == 2 and isinstance(desc[0], str):
        return tuple(desc[1])
    if isinstance(desc, (list, tuple)) and all(isinstance(d, (int, np.integer)) for d in desc):
        return tuple(int(d) for d in desc)
    raise QuantizationError(f"data_shapes: cannot read a shape from {desc!r}")


def _num_inputs(network, available: int) -> int:
    """How many of a batch's arrays the network takes (MXNet drops trailing ones — labels —
    until the call succeeds; here the signature says it)."""
    if isinstance(network, SymbolBlock):
        return min(available, len(network._cached_graph[0]))
    params = inspect.signature(network.forward).parameters.values()
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return available
    needed = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
              and p.default is p.empty]
    return min(available, max(1, len(needed)))


def _trace(network, shapes: list[tuple]) -> int:
    """Hybridize and run the network once on zeros; returns the number of data inputs."""
    n = _num_inputs(network, len(shapes))
    network.hybridize(backend="numpy")     # traced for its graph only
    network(*[ndarray(np.zeros(s, np.float32)) for s in shapes[:n]])
    return n


def _is_legacy(sym: Symbol) -> bool:
    """Every node already spelled as MXNet 1.9.1 names it (a graph loaded from a 1.x file)."""
    return all(n.is_var or legacy_op_for(n.opname, n.op) == n.opname for n in sym.topo())


def _float_graph(network, shapes: list[tuple]) -> tuple[Symbol, dict[str, np.ndarray]]:
    sym, arg_dict = network.export(None)
    params = {k.split(":", 1)[1]: as_numpy(v._reduce() if hasattr(v, "_reduce") else v)
              for k, v in arg_dict.items()}
    if not _is_legacy(sym):
        names = [n for n in sym.list_inputs() if n not in params]
        sym = to_legacy(sym, dict(zip(names, shapes)))
    return sym, params


def _excluded(sym: Symbol, layers, matches) -> set[str]:
    names = set(layers or [])
    for pattern in matches or []:
        names.update(n.name for n, _ in sym.get_internals().outputs if pattern in n.name)
    return names


def _collect(fused: Symbol, params: dict, inputs: list[str], want: dict, data, limit,
             collector, logger) -> int:
    """Run the fused float graph over the calibration batches, feeding each wanted entry's
    values to `collector.collect(name, array)`. Returns the number of examples seen."""
    ops = [(k, e) for k, e in want.items() if not e[0].is_var]
    feeds = {k: e[0].name for k, e in want.items() if e[0].is_var}
    block = None
    if ops:
        ins = [var(n, dtype="float32") for n in inputs]
        block = SymbolBlock(Group([Symbol([e]) for _, e in ops]), ins)
        block.hybridize(backend="numpy")    # calibration reads the reference kernels' values
        used = set(block.collect_params())
        block.load_dict({k: v for k, v in params.items() if k in used}, cast_dtype=True,
                        dtype_source="saved")
    seen = 0
    for arrays in data:
        arrays = [a.astype(np.float32, copy=False) for a in arrays[:len(inputs)]]
        named = dict(zip(inputs, arrays))
        for k, name in feeds.items():
            collector.collect(k, named[name])
        if block is not None:
            outs = block(*[ndarray(a) for a in arrays])
            outs = outs if isinstance(outs, (list, tuple)) else [outs]
            for (k, _), o in zip(ops, outs):
                collector.collect(k, o.asnumpy())
        seen += arrays[0].shape[0]
        if limit is not None and seen >= limit:
            break
    if logger:
        logger.info("Collected statistics from %d examples", seen)
    return seen


def _quantize_params(qsym: Symbol, params: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """MXNet's `_quantize_params`: `<w>_quantize` variables get int8 weights (symmetric,
    ±max|w|) and their `_min`/`_max`; other parameters pass through."""
    quantize = get_op("_contrib_quantize")
    attrs = quantize.parse_attrs({"out_type": "int8"})
    out = {}
    for name in qsym.list_inputs():
        if name.endswith(("weight_quantize", "bias_quantize")):
            w = params[name[: -len("_quantize")]].astype(np.float32)
            lo, hi = np.array([w.min()], np.float32), np.array([w.max()], np.float32)
            out[name], out[name + "_min"], out[name + "_max"] = quantize.kernel(attrs, w, lo, hi)
        elif name in params:
            out[name] = params[name]
    return out


def quantize_net(network, quantized_dtype: str = "auto", quantize_mode: str = "full",
                 exclude_layers: list[str] | None = None,
                 exclude_layers_match: list[str] | None = None,
                 exclude_operators: list[str] | None = None, calib_data: Iterable | None = None,
                 data_shapes: list | None = None, calib_mode: str = "none",
                 num_calib_examples: int | None = None, device=None,
                 LayerOutputCollector=None, logger: logging.Logger | None = None,
                 ctx=None) -> SymbolBlock:
    """An INT8 SymbolBlock computing `network` (MXNet 1.9.1's `quantize_net`, CPU).

    quantized_dtype: INT8 type of quantized inputs ('auto': uint8 where the calibrated range
    is non-negative); quantize_mode: 'full' (every quantizable node) or 'smart' (pooling,
    flatten, concat… only between convolutions/FCs); exclude_layers / exclude_layers_match
    (substrings) / exclude_operators: nodes or operators kept in float32; calib_mode:
    'none' (ranges computed at run time), 'naive' (min/max of each layer output over the
    calibration data), 'entropy' (KL-optimal thresholds) or 'customize' (LayerOutputCollector's
    `min_max_dict`); calib_data: any iterable of batches (a DataLoader); num_calib_examples:
    stop after this many examples (whole batches); data_shapes: the input shapes when there is
    no calib_data (DataDesc, (name, shape) or shapes).
    """
    _check_args(quantized_dtype, quantize_mode, calib_mode, calib_data, data_shapes,
                num_calib_examples, LayerOutputCollector,
                {"exclude_layers": exclude_layers, "exclude_layers_match": exclude_layers_match,
                 "exclude_operators": exclude_operators})
    data = batches(calib_data) if calib_data is not None else None
    first = next(data, None) if data is not None else None
    if data is not None and first is None:
        raise QuantizationError("calib_data yielded no batches")
    shapes = [_shape_of(d) for d in data_shapes] if data_shapes else \
        [a.shape for a in first]
    if logger:
        logger.info("Export HybridBlock")
    n_inputs = _trace(network, shapes)
    sym, params = _float_graph(network, shapes[:n_inputs])
    inputs = [n for n in sym.list_inputs() if n not in params]
    excluded = _excluded(sym, exclude_layers, exclude_layers_match)
    if logger:
        logger.info("These layers have been excluded %s", sorted(excluded))
    # a NumPy-style residual `x + y` (broadcast_add in 1.x) stays a float add, as MXNet leaves
    # it: MXNet fuses only elemwise_add sums, and its int8 sum of an int8 operand into a uint8
    # output costs accuracy (measured: top-5 overlap 4.50 fused vs 4.61 not, random ResNet-18)
    fused = fuse_for_quantization(sym)
    offline = set(params) - set(sym.list_auxiliary_states())
    plan = qgraph.plan(fused, excluded, set(exclude_operators or []), quantize_mode, offline)
    ranges = None
    if calib_mode != "none":
        collector = {"naive": MinMaxCollector, "entropy": HistogramCollector}.get(
            calib_mode, lambda: LayerOutputCollector)()
        stream = _chain(first, data)
        _collect(fused, params, inputs, plan.calib, stream, num_calib_examples, collector,
                 logger)
        ranges = (collector.ranges(quantized_dtype) if hasattr(collector, "ranges")
                  else dict(collector.min_max_dict))
    qsym = qgraph.build(fused, plan, ranges, quantized_dtype, offline)
    qparams = _quantize_params(qsym, params)
    net = SymbolBlock(qsym.as_np_ndarray(), [var(n, dtype="float32") for n in inputs])
    net.load_dict(qparams, cast_dtype=True, dtype_source="saved")
    return net


def _chain(first, rest):
    yield first
    yield from rest


def quantize_net_v2(network, quantized_dtype: str = "auto", quantize_mode: str = "full",
                    quantize_granularity: str = "tensor-wise", **kwargs) -> SymbolBlock:
    """MXNet 1.9.1's `quantize_net_v2`: `quantize_net` with per-tensor weight scales only."""
    if quantize_granularity != "tensor-wise":
        raise QuantizationError(f"quantize_granularity {quantize_granularity!r} is not "
                                "supported (only 'tensor-wise')")
    return quantize_net(network, quantized_dtype, quantize_mode, **kwargs)
