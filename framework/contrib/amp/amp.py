"""`mx.contrib.amp` (MXNet 1.9.1's API) for bfloat16 inference.

`convert_symbol` / `convert_model` / `convert_hybrid_block` insert the `amp_cast` and
`amp_multicast` nodes MXNet inserts (convert.py), so the result loads in real MXNet 1.9.1 and
MXNet's own converted files load here. Only `target_dtype='bfloat16'` is offered: float16 AMP
was MXNet's GPU path. `init` exists for scripts that call it: imperative calls here are not
rewritten (MXNet's `init` patches its operator functions for training with loss scaling).
"""
from __future__ import annotations

import logging
import numpy as np

from ...base import BFLOAT16, MXNetError
from ...gluon.symbol_block import SymbolBlock
from ...io.dtypes import float32_to_bfloat16
from ...ndarray import ndarray
from ...ops.tensor import amp as _lists
from ...symbol.graph import Symbol, bfloat16_vars, var
from ...symbol.legacy_export import legacy_op_for, to_legacy
from .convert import Lists, reduce_precision

bfloat16 = BFLOAT16          # MXNet's `amp.bfloat16`: numpy's view of the type in files
TARGET_DTYPES = ("bfloat16",)


class AMPError(MXNetError, ValueError):
    """A bad argument to an `amp` function (the message names it)."""


def _target(target_dtype) -> str:
    if isinstance(target_dtype, str) and target_dtype in TARGET_DTYPES:
        return target_dtype
    if target_dtype is BFLOAT16 or (not isinstance(target_dtype, str)
                                    and np.dtype(target_dtype) == BFLOAT16):
        return "bfloat16"
    raise AMPError(f"target_dtype must be 'bfloat16' (float16 AMP is MXNet's GPU path), "
                   f"got {target_dtype!r}")


def list_lp16_ops(target_dtype) -> list[str]:
    _target(target_dtype)
    return list(_lists.BF16_FUNCS)


def list_fp32_ops(target_dtype) -> list[str]:
    _target(target_dtype)
    return list(_lists.FP32_FUNCS)


def list_lp16_fp32_ops(target_dtype) -> list[str]:
    _target(target_dtype)
    return list(_lists.BF16_FP32_FUNCS)


def list_conditional_fp32_ops(target_dtype) -> list[tuple[str, str, list[str]]]:
    _target(target_dtype)
    return [(op, attr, list(vals)) for op, attr, vals in _lists.CONDITIONAL_FP32_FUNCS]


def list_widest_type_cast(target_dtype) -> list[str]:
    _target(target_dtype)
    return list(_lists.WIDEST_TYPE_CASTS)


def init(target_dtype="bfloat16", target_precision_ops=None, conditional_fp32_ops=None,
         fp32_ops=None) -> None:
    """Accepted for compatibility; converting a model (`convert_*`) is what takes effect."""
    _target(target_dtype)
    logging.info("Using AMP (bfloat16): convert models with amp.convert_hybrid_block")


def _names(arg: str, value, default: list) -> list:
    if value is None:
        return list(default)
    if not isinstance(value, (list, tuple)):
        raise AMPError(f"{arg} must be a list, got {type(value).__name__}")
    return list(value)


def _lists_for(target: str, target_dtype_ops, fp32_ops, conditional_fp32_ops,
               excluded_sym_names) -> Lists:
    low = _names("target_dtype_ops", target_dtype_ops, list_lp16_ops(target))
    fp32 = _names("fp32_ops", fp32_ops, list_fp32_ops(target))
    cond = _names("conditional_fp32_ops", conditional_fp32_ops, list_conditional_fp32_ops(target))
    conditional: dict = {}
    for item in cond:
        if not (isinstance(item, (list, tuple)) and len(item) == 3 and isinstance(item[0], str)
                and isinstance(item[1], str) and isinstance(item[2], (list, tuple))):
            raise AMPError(f"conditional_fp32_ops entries are (op, attribute, [values]), "
                           f"got {item!r}")
        conditional.setdefault(item[0], {})[item[1]] = [str(v) for v in item[2]]
    for a, b, sa, sb in ((low, fp32, "target_dtype_ops", "fp32_ops"),
                         (low, conditional, "target_dtype_ops", "conditional_fp32_ops"),
                         (conditional, fp32, "conditional_fp32_ops", "fp32_ops")):
        common = set(a) & set(b)
        if common:
            raise AMPError(f"ops cannot be in two lists: {sorted(common)} in {sa} and {sb}")
    known = (set(list_lp16_ops(target)) | set(list_fp32_ops(target))
             | set(list_lp16_fp32_ops(target)) | {c[0] for c in list_conditional_fp32_ops(target)})
    unknown = (set(low) | set(fp32) | set(conditional)) - known
    if unknown:
        raise AMPError(f"ops {sorted(unknown)} are in none of amp.list_lp16_ops, list_fp32_ops, "
                       "list_lp16_fp32_ops, list_conditional_fp32_ops")
    excluded = _names("excluded_sym_names", excluded_sym_names, [])
    return Lists(target=set(low), fp32=set(fp32), widest=set(list_widest_type_cast(target)),
                 flowing=set(list_lp16_fp32_ops(target)), conditional=conditional,
                 excluded=set(excluded))


def convert_symbol(sym: Symbol, target_dtype="bfloat16", target_dtype_ops=None, fp32_ops=None,
                   conditional_fp32_ops=None, excluded_sym_names=None, data_names=None,
                   cast_optional_params: bool = False) -> Symbol:
    """A float32 graph → the mixed-precision graph (MXNet's amp_cast/amp_multicast nodes).
    `data_names` default: the inputs without a `__dtype__` attribute (MXNet's rule)."""
    if not isinstance(sym, Symbol):
        raise AMPError("convert_symbol: the first argument must be a Symbol")
    target = _target(target_dtype)
    lists = _lists_for(target, target_dtype_ops, fp32_ops, conditional_fp32_ops,
                       excluded_sym_names)
    if data_names is None:
        attrs = sym.attr_dict()
        data_names = [n for n in sym.list_inputs() if "__dtype__" not in attrs.get(n, {})]
    lists.data_names = set(data_names)
    lists.cast_optional_params = bool(cast_optional_params)
    return reduce_precision(sym, lists, target)


def _to_target(params: dict, names: set) -> dict:
    """Parameters the converted graph stores in bfloat16, as MXNet's `amp_cast` makes them."""
    out = {}
    for k, v in params.items():
        if k in names:
            data = np.asarray(v._data if isinstance(v, ndarray) else v, np.float32)
            v = ndarray(float32_to_bfloat16(data))
        out[k] = v
    return out


def convert_model(sym: Symbol, arg_params: dict, aux_params: dict, target_dtype="bfloat16",
                  target_dtype_ops=None, fp32_ops=None, conditional_fp32_ops=None,
                  excluded_sym_names=None, cast_optional_params: bool = False):
    """`(sym, arg_params, aux_params)` of a float32 model → the mixed-precision model; the
    parameters the new graph types bfloat16 (`cast_optional_params`) are converted."""
    if not isinstance(arg_params, dict) or not isinstance(aux_params, dict):
        raise AMPError("convert_model: arg_params and aux_params must be dicts of name → array")
    if excluded_sym_names is not None and not isinstance(excluded_sym_names, (list, tuple)):
        raise AMPError("excluded_sym_names must be a list of symbol names")
    data_names = [n for n in sym.list_inputs() if n not in arg_params and n not in aux_params]
    new = convert_symbol(sym, target_dtype, target_dtype_ops, fp32_ops, conditional_fp32_ops,
                         excluded_sym_names, data_names, cast_optional_params)
    low = bfloat16_vars(new)
    return new, _to_target(arg_params, low), _to_target(aux_params, low)


def _legacy_graph(block) -> tuple[Symbol, dict, list[str]]:
    """The block's float32 graph spelled with MXNet 1.9.1's operators (the lists' names), its
    parameters by name and its data input names."""
    sym, arg_dict = block.export(None, remove_amp_cast=False)
    params = {k.split(":", 1)[1]: v for k, v in arg_dict.items()}
    inputs = [s.name for s in block._cached_graph[0]]
    if not all(n.is_var or legacy_op_for(n.opname, n.op) == n.opname for n in sym.topo()):
        shapes = getattr(block, "_traced_shapes", None)
        sym = to_legacy(sym, dict(zip(inputs, shapes)) if shapes else None)
    return sym, params, inputs


def convert_hybrid_block(block, target_dtype="bfloat16", target_dtype_ops=None, fp32_ops=None,
                         conditional_fp32_ops=None, excluded_sym_names=None, ctx=None,
                         cast_optional_params: bool = False, device=None) -> SymbolBlock:
    """A hybridized, once-run float32 HybridBlock → a SymbolBlock of the mixed-precision graph
    with the block's parameters (bfloat16 where the graph stores them so)."""
    if not getattr(block, "_cached_graph", None):
        raise RuntimeError("Please first call block.hybridize() and then run forward with "
                           "this block at least once before calling convert_hybrid_block.")
    sym, params, inputs = _legacy_graph(block)
    new = convert_symbol(sym, target_dtype, target_dtype_ops, fp32_ops, conditional_fp32_ops,
                         excluded_sym_names, inputs, cast_optional_params)
    net = SymbolBlock(new.as_np_ndarray(), [var(n, dtype="float32") for n in inputs])
    used = set(net.collect_params())
    net.load_dict(_to_target({k: v for k, v in params.items() if k in used}, bfloat16_vars(new)),
                  device if device is not None else ctx, cast_dtype=True, dtype_source="saved")
    return net
