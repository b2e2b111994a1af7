"""`compile_model`: a hybridized block as a `CompiledModel` (framework/compiler/compiled.py), the
one object a server runs NumPy arrays through.

Without an engine it is the block's own cached op, exactly as hybridized. With one it is a twin:
a SymbolBlock over the block's graph and the same Parameter objects (no second copy of the
weights, only of what the backend rewrites), compiled by `optimize_for` for the example's
shapes, so the block keeps its traced graph (export, parameter listing, op hooks by the model's
own node names) while the twin runs the rewritten one.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ..compiler.compiled import CompiledModel
from ..compiler.engine import OPENVINO, EngineChoice
from ..ndarray import ndarray
from ..symbol import var
from .hybrid_block import HybridBlock
from .symbol_block import SymbolBlock

NUMPY_PIPELINE = "hybridserve"      # the optimize_for passes an optimized NumPy graph runs


def compile_model(block: HybridBlock, example: Sequence[np.ndarray],
                  engine: EngineChoice | None = None, data_names: Sequence[str] | None = None,
                  **options) -> CompiledModel:
    """`block` compiled for the data arrays `example` (one per data input, in order).

    engine None: the block's cached op (the block hybridized; built by a call on `example` if
    it has not run). An `EngineChoice` (framework.compiler.engine.select_engine): a twin
    through `optimize_for` — the NumPy pass pipeline for `numpy`, else that engine's backend
    (in the choice's precision), with static buffers and `options` (the backend's: session
    threads, `shape_cache`, `verify_bound`, …); `data_names` names the twin's data inputs
    (default `data0`, `data1`, …). The model's `engine` says what really runs (no region
    compiled: NumPy, with the reason)."""
    arrays = [np.asarray(a) for a in example]
    if engine is None:
        if block.engine_choice is None:
            block(*[ndarray(a) for a in arrays])
        op, spec = block.compiled()
        return CompiledModel(op, spec, block.engine_choice, "traced", arrays)
    syms, out, params = _graph(block, arrays, data_names)
    twin = SymbolBlock(out, syms, params=params)
    if engine.name == OPENVINO:
        options = {"precision": engine.precision, **options}
    twin.optimize_for(*[ndarray(a) for a in arrays], backend=engine.backend or NUMPY_PIPELINE,
                      static_alloc=True, static_shape=True, **options)
    op, spec = twin.compiled()
    graph = "partitioned" if engine.compiled else "optimized"
    return CompiledModel(op, spec, engine, graph, arrays)


def _graph(block: HybridBlock, arrays: list[np.ndarray], names: Sequence[str] | None):
    """(data variables, output, parameters by graph name) of the block's graph. A
    SymbolBlock's over variables named `names` and typed as the example: parameter dtypes are
    inferred from them (an INT8 export's int8 weights stay int8 instead of defaulting to
    float32); any other block's as traced at its first call."""
    if isinstance(block, SymbolBlock):
        names = list(names or [f"data{k}" for k in range(len(arrays))])
        syms = [var(n, dtype=a.dtype.name).as_np_ndarray() for n, a in zip(names, arrays)]
        return syms, block(*syms), block.collect_params()
    if block.engine_choice is None:
        block(*[ndarray(a) for a in arrays])
    syms, out = block._get_graph(*[ndarray(a) for a in arrays])
    return syms, out, {p.var_name(): p for p in block.collect_params().values()}
