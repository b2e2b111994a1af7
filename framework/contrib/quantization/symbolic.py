"""MXNet 2.0's symbol-level quantization API: `quantize_model` (a float Symbol and its params
in, the INT8 Symbol and params out), `quantize_model_onednn` (the same after oneDNN fusion),
`quantize_graph` / `calib_graph` (the two halves, with a collector filled in between) and the
helpers MXNet's tests call (`_quantize_symbol`, `_calibrate_quantized_sym`, `_quantize_params`).

The passes are graph.py's (`plan` + `build`, uncalibrated); calibration then writes each
range onto the node that needs it, as MXNet's SetCalibTableToQuantizedGraph does: a
`_contrib_quantize_v2` / `_contrib_requantize` takes its input entry's range, a node that
calibrates its own output (fused conv/FC, quantized add) takes its output's.
"""
from __future__ import annotations

import logging
from typing import Any

import numpy as np

from ...ndarray import ndarray
from ...ops.registry import get_op
from ...symbol.graph import Node, Symbol
from ...symbol.legacy_export import legacy_op_for, to_legacy
from . import graph as qgraph
from .collectors import make_collector
from .data import as_numpy, batches, flatten
from .errors import QuantizationError
from .fuse import fuse_for_quantization
from .runner import entry_runner

DTYPES = ("auto", "int8", "uint8")
GRANULARITIES = ("tensor-wise", "channel-wise")
_PREFIX = "quantized_"
_SUFFIX = "_quantize"


def check_common(quantized_dtype: str, quantize_granularity: str, lists: dict) -> None:
    """The argument checks quantize_model, quantize_graph and quantize_net share."""
    if quantized_dtype not in DTYPES:
        raise QuantizationError(f"unknown quantized_dtype {quantized_dtype!r}, expected "
                                "'int8', 'uint8' or 'auto'")
    if quantize_granularity not in GRANULARITIES:
        raise QuantizationError(f"unknown quantize_granularity {quantize_granularity!r}, "
                                "expected 'tensor-wise' or 'channel-wise'")
    for name, v in lists.items():
        if v is not None and (not isinstance(v, (list, tuple))
                              or not all(isinstance(s, str) for s in v)):
            raise QuantizationError(f"{name} must be a list of strings, got {v!r}")


def as_legacy(sym: Symbol, shapes: dict[str, tuple] | None = None) -> Symbol:
    """The graph in MXNet 1.x operators (what the quantization passes read); a graph already
    in them (loaded from a 1.x file) is returned as it is. `shapes`: input shapes, a hint."""
    if all(n.is_var or legacy_op_for(n.opname, n.op) == n.opname for n in sym.topo()):
        return sym
    return to_legacy(sym, shapes)


def _quantize_symbol(sym: Symbol, device=None, excluded_symbols=None, excluded_operators=None,
                     offline_params=None, quantized_dtype: str = "int8",
                     quantize_mode: str = "smart",
                     quantize_granularity: str = "tensor-wise") -> tuple[Symbol, list[str]]:
    """(INT8 symbol without calibrated ranges, names of the entries calibration must see)."""
    check_common(quantized_dtype, quantize_granularity,
                 {"excluded_symbols": excluded_symbols, "excluded_operators": excluded_operators})
    if quantize_mode not in qgraph.MODES:
        raise QuantizationError(f"unknown quantize_mode {quantize_mode!r}, expected 'full' "
                                "or 'smart'")
    sym = as_legacy(sym)
    offline = set(offline_params or [])
    plan = qgraph.plan(sym, set(excluded_symbols or []), set(excluded_operators or []),
                       quantize_mode, offline, quantize_granularity)
    qsym = qgraph.build(sym, plan, None, quantized_dtype, offline, quantize_granularity)
    return qsym, list(plan.calib)


def _calib_key(node: Node, src: Node, i: int) -> str:
    """The calibration-table name of entry (src, i) as `node` reads it."""
    name = node.name[:-len(_SUFFIX)] if src.is_var else src.output_name(i)
    return name[len(_PREFIX):] if name.startswith(_PREFIX) else name


def _calibrate_quantized_sym(qsym: Symbol, min_max_dict: dict | None) -> Symbol:
    """A copy of `qsym` with each `{entry name: (min, max)}` range set on the node reading it."""
    if not min_max_dict:
        return qsym
    out = qsym.copy()
    reads_input = (get_op("_contrib_quantize_v2"), get_op("_contrib_quantize_asym"),
                   get_op("_contrib_requantize"))
    for n in out.topo():
        if n.is_var:
            continue
        if n.op in reads_input:
            key = _calib_key(n, *n.inputs[0])
        elif n.name.startswith(_PREFIX) and "min_calib_range" in n.op.attrs:
            key = _calib_key(n, n, 0)
        else:
            continue
        if key in min_max_dict:
            lo, hi = min_max_dict[key]
            n.attrs.update(min_calib_range=qgraph.fmt(lo), max_calib_range=qgraph.fmt(hi))
            n._parsed = None
    return out


def _quantize_params(qsym: Symbol, params: dict, min_max_dict: dict | None = None) -> dict:
    """Parameters of `qsym`: `<p>_quantize` weights/biases as int8 with their `_min`/`_max`
    (symmetric over ±max|p|), other arguments as given, range variables from `min_max_dict`."""
    quantize = get_op("_contrib_quantize")
    attrs = quantize.parse_attrs({"out_type": "int8"})
    min_max_dict = min_max_dict or {}
    wrap = any(isinstance(v, ndarray) for v in params.values())
    out: dict[str, Any] = {}
    for name in qsym.list_arguments():
        if name.endswith(("weight_quantize", "bias_quantize")):
            p = as_numpy(params[name[:-len(_SUFFIX)]]).astype(np.float32)
            lo, hi = np.array([p.min()], np.float32), np.array([p.max()], np.float32)
            values = quantize.kernel(attrs, p, lo, hi)
            for k, v in zip((name, name + "_min", name + "_max"), values):
                out[k] = ndarray(v) if wrap else v
        elif name in params:
            out[name] = params[name]
        elif name.endswith(("_min", "_max")) and name[:-4] in min_max_dict:
            v = np.array([min_max_dict[name[:-4]][name.endswith("_max")]], np.float32)
            out[name] = ndarray(v) if wrap else v
    return out


def quantize_graph(sym: Symbol, arg_params: dict, aux_params: dict, device=None,
                   excluded_sym_names=None, excluded_op_names=None, calib_mode: str = "entropy",
                   quantized_dtype: str = "int8", quantize_mode: str = "full",
                   quantize_granularity: str = "tensor-wise", LayerOutputCollector=None,
                   logger: logging.Logger | None = None, ctx=None):
    """(qsym, qarg_params, aux_params, collector, calib_layers): the INT8 graph before
    calibration and the collector to fill (None for calib_mode 'none')."""
    qsym, layers = _quantize_symbol(sym, device or ctx, excluded_sym_names, excluded_op_names,
                                    list(arg_params), quantized_dtype, quantize_mode,
                                    quantize_granularity)
    collector = None
    if calib_mode not in (None, "none"):
        collector = make_collector(calib_mode, quantized_dtype, layers, LayerOutputCollector,
                                   logger)
    return qsym, _quantize_params(qsym, arg_params, {}), aux_params, collector, layers


def calib_graph(qsym: Symbol, arg_params: dict, aux_params: dict, collector,
                calib_mode: str = "entropy", logger: logging.Logger | None = None):
    """(qsym, qarg_params, aux_params) with the filled collector's ranges set."""
    if calib_mode not in ("entropy", "naive", "custom"):
        raise QuantizationError("calib_graph needs calib_mode 'naive', 'entropy' or 'custom', "
                                f"got {calib_mode!r}")
    min_max_dict = collector.post_collect()
    qsym = _calibrate_quantized_sym(qsym, min_max_dict)
    return qsym, _quantize_params(qsym, arg_params, min_max_dict), aux_params


def feed_collector(sym: Symbol, params: dict, inputs: list[str], names: list[str], calib_data,
                   collector, num_calib_batches: int | None, logger=None) -> int:
    """Run the float `sym` over `calib_data`, handing each entry in `names` to
    `collector.collect(name, op_name, array)`. Returns the number of batches run."""
    entries = {n.name if n.is_var else n.output_name(i): (n, i)
               for n, i in sym.get_internals().outputs}
    want = {k: entries[k] for k in names if k in entries}
    run = entry_runner(params, inputs, want)
    count = 0
    for items in batches(calib_data):
        for k, v in run(flatten(items)).items():
            n = want[k][0]
            collector.collect(k, n.name if n.is_var else n.opname, ndarray(v))
        count += 1
        if num_calib_batches is not None and count >= num_calib_batches:
            break
    if logger:
        logger.info("Collected statistics from %d batches", count)
    return count


def quantize_model(sym: Symbol, arg_params: dict, aux_params: dict, data_names=("data",),
                   device=None, excluded_sym_names=None, excluded_op_names=None,
                   calib_mode: str = "entropy", calib_data=None,
                   num_calib_batches: int | None = None, quantized_dtype: str = "int8",
                   quantize_mode: str = "smart", quantize_granularity: str = "tensor-wise",
                   logger: logging.Logger | None = None, ctx=None, num_calib_examples=None):
    """MXNet 2.0's `quantize_model`: (qsym, qarg_params, aux_params) for a float symbol, its
    ranges calibrated over `calib_data` (an iterable of batches) unless calib_mode is 'none'."""
    if calib_mode not in (None, "none", "naive", "entropy"):
        raise QuantizationError(f"unknown calibration mode {calib_mode!r}, expected 'none', "
                                "'naive' or 'entropy'")
    if calib_mode not in (None, "none") and calib_data is None:
        raise QuantizationError(f"calib_data must be provided when calib_mode={calib_mode}")
    qsym, qargs, aux, collector, layers = quantize_graph(
        sym, arg_params, aux_params, device or ctx, excluded_sym_names, excluded_op_names,
        calib_mode, quantized_dtype, quantize_mode, quantize_granularity, None, logger)
    if collector is not None:
        params = {**arg_params, **aux_params}
        feed_collector(as_legacy(sym), params, list(data_names), layers, calib_data, collector,
                       num_calib_batches, logger)
        qsym, qargs, aux = calib_graph(qsym, arg_params, aux_params, collector, calib_mode,
                                       logger)
    return qsym.as_np_ndarray(), qargs, aux


def quantize_model_onednn(sym: Symbol, arg_params: dict, aux_params: dict, *args, **kwargs):
    """`quantize_model` after oneDNN's fusion (conv+bn+act, FC+act) and with its
    post-quantization forms."""
    return quantize_model(fuse_for_quantization(as_legacy(sym)), arg_params, aux_params,
                          *args, **kwargs)
