"""`quantize_net`: MXNet 2.0's user API (with 1.9.1's spellings) — a float HybridBlock in, an
INT8 SymbolBlock out.

The steps are MXNet's (its CPU path): export the network's graph (1.x operators), fuse conv/FC
chains into oneDNN subgraph nodes (fuse.py), decide which nodes run INT8 (graph.plan), run the
fused float graph over the calibration data feeding each needed layer output to a collector
(collectors.py), build the quantized graph with the calibrated ranges (graph.build) and quantize
FC weights offline. The result is the graph real MXNet 1.9.1's `quantize_net` returns.
"""
from __future__ import annotations

import inspect
import logging
from typing import Any, Iterable

import numpy as np

from ...gluon.symbol_block import SymbolBlock
from ...ndarray import ndarray
from ...symbol.graph import Symbol, var
from . import graph as qgraph
from .collectors import CalibrationCollector, make_collector
from .data import as_numpy, batches, flatten, regroup
from .errors import QuantizationError
from .fuse import fuse_for_quantization
from .runner import entry_runner
from .symbolic import _quantize_params, as_legacy, check_common

CALIB_MODES = ("none", "naive", "entropy", "custom", "customize")


def _check_args(quantized_dtype, quantize_mode, quantize_granularity, calib_mode, calib_data,
                data_shapes, collector, limits: dict, lists: dict) -> None:
    check_common(quantized_dtype, quantize_granularity, lists)
    if quantize_mode not in qgraph.MODES:
        raise QuantizationError(f"unknown quantize_mode {quantize_mode!r}, expected 'full' "
                                "or 'smart'")
    if calib_mode not in CALIB_MODES:
        raise QuantizationError(f"unknown calib_mode {calib_mode!r}, expected 'none', 'naive', "
                                "'entropy' or 'custom'")
    if calib_mode in ("custom", "customize") and collector is None:
        raise QuantizationError(f"calib_mode={calib_mode!r} needs a LayerOutputCollector")
    if calib_mode != "none" and calib_data is None:
        raise QuantizationError(f"calib_data must be provided when calib_mode={calib_mode}")
    if calib_data is None and not data_shapes:
        raise QuantizationError("data_shapes required (or calib_data to take them from)")
    for name, v in limits.items():
        if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v <= 0):
            raise QuantizationError(f"{name} must be a positive int, got {v!r}")


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


def _trace(network, shapes: list) -> int:
    """Hybridize and run the network once on zeros (`shapes` nested as the network takes its
    inputs); returns the number of inputs it takes."""
    n = _num_inputs(network, len(shapes))
    network.hybridize(backend="numpy")     # traced for its graph only
    zeros = [ndarray(np.zeros(s, np.float32)) for s in flatten(shapes[:n])]
    network(*regroup(zeros, shapes[:n]))
    return n


def _input_names(network, sym: Symbol, params: dict) -> list[str]:
    """The graph's data inputs in the order the network's (flattened) arguments fill them."""
    names = [n for n in sym.list_inputs() if n not in params]
    traced = [s.name for s in (getattr(network, "_cached_graph", None) or ((),))[0]]
    return traced if sorted(traced) == sorted(names) else names


def _float_graph(network, shapes: list[tuple]) -> tuple[Symbol, dict[str, np.ndarray]]:
    sym, arg_dict = network.export(None)
    params = {k.split(":", 1)[1]: as_numpy(v._reduce() if hasattr(v, "_reduce") else v)
              for k, v in arg_dict.items()}
    names = _input_names(network, sym, params)
    return as_legacy(sym, dict(zip(names, shapes))), params


def _excluded(sym: Symbol, layers, matches) -> set[str]:
    names = set(layers or [])
    for pattern in matches or []:
        names.update(n.name for n, _ in sym.get_internals().outputs if pattern in n.name)
    return names


def _collect(params: dict, inputs: list[str], want: dict, data, limit: tuple, collector,
             logger) -> int:
    """Feed each wanted entry's values over the calibration batches to `collector`. Returns
    the number of examples seen. limit: (examples, batches), either None."""
    run = entry_runner(params, inputs, want)
    seen = count = 0
    for items in data:
        arrays = flatten(items)
        for k, v in run(arrays).items():
            node = want[k][0]
            if isinstance(collector, CalibrationCollector):   # MXNet 2.0: (name, op, array)
                collector.collect(k, node.name if node.is_var else node.opname, ndarray(v))
            else:                                             # 1.9.1's customize: (name, array)
                collector.collect(k, v)
        seen += arrays[0].shape[0]
        count += 1
        if (limit[0] is not None and seen >= limit[0]) or \
                (limit[1] is not None and count >= limit[1]):
            break
    if logger:
        logger.info("Collected statistics from %d examples (%d batches)", seen, count)
    return seen


def quantize_net(network, quantized_dtype: str = "auto", quantize_mode: str = "full",
                 quantize_granularity: str = "tensor-wise",
                 exclude_layers: list[str] | None = None,
                 exclude_layers_match: list[str] | None = None,
                 exclude_operators: list[str] | None = None, calib_data: Iterable | None = None,
                 data_shapes: list | None = None, calib_mode: str = "none",
                 num_calib_batches: int | None = None, device=None,
                 LayerOutputCollector=None, logger: logging.Logger | None = None, *,
                 ctx=None, num_calib_examples: int | None = None) -> SymbolBlock:
    """An INT8 SymbolBlock computing `network` (MXNet 2.0's `quantize_net`, which also takes
    1.9.1's `ctx`, `num_calib_examples` and `calib_mode='customize'`; CPU only).

    quantized_dtype: INT8 type of quantized inputs ('auto': uint8 where the calibrated range
    is non-negative); quantize_mode: 'full' (every quantizable node) or 'smart' (pooling,
    flatten, concat… only between convolutions/FCs); quantize_granularity: FC weights scaled
    'tensor-wise' (quantized offline) or 'channel-wise' (per output row, in the FC node;
    needs calibration); exclude_layers / exclude_layers_match (substrings) /
    exclude_operators: nodes or operators kept in float32; calib_mode: 'none' (ranges computed
    at run time), 'naive' (min/max of each layer output over the calibration data), 'entropy'
    (KL-optimal thresholds) or 'custom' (a CalibrationCollector given as
    LayerOutputCollector; 1.9.1's 'customize' reads a collector's `min_max_dict`);
    calib_data: any iterable of batches (a DataLoader, an NDArrayIter); num_calib_batches /
    num_calib_examples: stop after that many batches / examples (whole batches); data_shapes:
    the input shapes when there is no calib_data (DataDesc, (name, shape) or shapes).
    """
    device = device if device is not None else ctx
    if device is not None and getattr(device, "device_type", "cpu") != "cpu":
        raise QuantizationError(f"quantization runs on CPU only, got device {device}")
    _check_args(quantized_dtype, quantize_mode, quantize_granularity, calib_mode, calib_data,
                data_shapes, LayerOutputCollector,
                {"num_calib_examples": num_calib_examples, "num_calib_batches": num_calib_batches},
                {"exclude_layers": exclude_layers, "exclude_layers_match": exclude_layers_match,
                 "exclude_operators": exclude_operators})
    if quantize_granularity == "channel-wise" and calib_mode == "none":
        raise QuantizationError("quantize_granularity='channel-wise' needs calibration "
                                "(MXNet's channel-wise FC fuses its requantize)")
    data = batches(calib_data) if calib_data is not None else None
    first = next(data, None) if data is not None else None
    if data is not None and first is None:
        raise QuantizationError("calib_data yielded no batches")
    shapes = [_shape_of(d) for d in data_shapes] if data_shapes else \
        regroup([a.shape for a in flatten(first)], first)
    if logger:
        logger.info("Export HybridBlock")
    n_inputs = _trace(network, shapes)
    sym, params = _float_graph(network, flatten(shapes[:n_inputs]))
    inputs = _input_names(network, sym, params)
    excluded = _excluded(sym, exclude_layers, exclude_layers_match)
    if logger:
        logger.info("These layers have been excluded %s", sorted(excluded))
    # a NumPy-style residual `x + y` (broadcast_add in 1.x) stays a float add, as MXNet leaves
    # it: MXNet fuses only elemwise_add sums, and its int8 sum of an int8 operand into a uint8
    # output costs accuracy (measured: top-5 overlap 4.50 fused vs 4.61 not, random ResNet-18)
    fused = fuse_for_quantization(sym)
    offline = set(params) - set(sym.list_auxiliary_states())
    plan = qgraph.plan(fused, excluded, set(exclude_operators or []), quantize_mode, offline,
                       quantize_granularity)
    ranges = None
    if calib_mode != "none":
        collector = make_collector(calib_mode, quantized_dtype, list(plan.calib),
                               LayerOutputCollector, logger)
        _collect(params, inputs, plan.calib, _chain(first, data),
                 (num_calib_examples, num_calib_batches), collector, logger)
        ranges = (collector.post_collect() if isinstance(collector, CalibrationCollector)
                  else dict(collector.min_max_dict))
    qsym = qgraph.build(fused, plan, ranges, quantized_dtype, offline, quantize_granularity)
    qparams = _quantize_params(qsym, params)
    qparams.update((k, params[k]) for k in qsym.list_auxiliary_states() if k in params)
    net = SymbolBlock(qsym.as_np_ndarray(),
                      regroup([var(n, dtype="float32") for n in inputs], shapes[:n_inputs]))
    net.load_dict(qparams, cast_dtype=True, dtype_source="saved")
    return net


def _chain(first, rest):
    yield first
    yield from rest


def quantize_net_v2(network, quantized_dtype: str = "auto", quantize_mode: str = "full",
                    quantize_granularity: str = "tensor-wise", **kwargs) -> SymbolBlock:
    """MXNet 1.9.1's `quantize_net_v2`: `quantize_net` (whose signature it shares)."""
    return quantize_net(network, quantized_dtype, quantize_mode, quantize_granularity, **kwargs)
