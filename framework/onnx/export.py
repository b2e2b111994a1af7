"""Write ONNX files: a Symbol with its parameters, a HybridBlock, or a pair of MXNet files."""
from __future__ import annotations

import os
from typing import Mapping

import numpy as np

from ..symbol.graph import Symbol
from ..symbol.infer import _attr_shape
from .build import lower_symbol
from .context import DEFAULT_OPSET
from .deps import require
from ..ops.lowering import OnnxLoweringError


def export_symbol(symbol: Symbol, params: Mapping[str, np.ndarray], path: str | os.PathLike,
                  shapes: Mapping[str, tuple], dtypes: Mapping[str, object] | None = None, *,
                  dynamic_batch: bool = True, opset: int = DEFAULT_OPSET) -> str:
    """Lower `symbol` (parameters by bare name), check it with `onnx.checker` and write it to
    `path` atomically; returns `path`."""
    from ..io.atomic import write_atomic
    onnx = require("onnx")
    model = lower_symbol(symbol, params, shapes, dtypes, dynamic_batch=dynamic_batch,
                         opset=opset, graph_name=symbol.name or "hybridserve")
    onnx.checker.check_model(model)
    write_atomic(os.fspath(path), model.SerializeToString())
    return os.fspath(path)


def data_shapes(symbol: Symbol, params: Mapping[str, object],
                shapes: Mapping[str, tuple] | None) -> dict[str, tuple]:
    """The graph inputs' shapes: those given, else the variables' `__shape__` attrs."""
    out = dict(shapes or {})
    for node in symbol.topo():
        if node.is_var and node.name not in params and node.name not in out:
            s = _attr_shape(node)
            if s is None:
                raise OnnxLoweringError(f"ONNX export needs the shape of input '{node.name}' "
                                        "(pass input shapes)")
            out[node.name] = s
    return out


def export_block(block, path: str, epoch: int = 0, remove_amp_cast: bool = True,
                 input_shapes: Mapping[str, tuple] | None = None, **kw) -> str:
    """`block.export(path, format='onnx')`: the block's whole graph as `path.onnx`, graph inputs
    named as the block's data inputs (leading axis dynamic), parameters as initializers."""
    sym, arg_dict = block.export(None, epoch, remove_amp_cast)
    params = {k.split(":", 1)[1]: np.asarray(getattr(v, "_data", v)) for k, v in arg_dict.items()}
    shapes = data_shapes(sym, params, input_shapes or _last_data_shapes(block))
    return export_symbol(sym, params, f"{path}.onnx", shapes, **kw)


def _last_data_shapes(block) -> dict[str, tuple] | None:
    """Data shapes the block last ran with: traced ones, or its cached op's first signature
    (a SymbolBlock is never traced)."""
    traced = getattr(block, "_traced_shapes", None)
    if traced:
        return traced
    op = getattr(block, "_cached_op", None)
    sigs = op.signatures if op is not None else []
    if not sigs:
        return None
    names = [name for is_data, name, _ in block._cached_op_args if is_data]
    sig = sigs[0]
    shapes = [sig[0]] if len(names) == 1 else [s for s, _ in sig]
    return {n: tuple(s) for n, s in zip(names, shapes)}


def convert(symbol_file: str | os.PathLike, params_file: str | os.PathLike | None,
            out_file: str | os.PathLike, input_shapes: Mapping[str, tuple] | None = None,
            **kw) -> str:
    """MXNet `-symbol.json` (+ `.params`, 1.x or 2.x) → a standard ONNX file at `out_file`.
    Input shapes default to the data variables' `__shape__` attrs; the leading axis is dynamic
    unless `dynamic_batch=False`."""
    from ..io.params_file import load_params, strip_prefixes
    from ..symbol import load
    sym = load(os.fspath(symbol_file))
    params = strip_prefixes(load_params(os.fspath(params_file))) if params_file else {}
    params = {k: np.asarray(getattr(v, "_data", v)) for k, v in params.items()}
    return export_symbol(sym, params, out_file, data_shapes(sym, params, input_shapes), **kw)
