"""Runs a float graph over calibration batches and reads chosen internal entries (what the
collectors see): variables straight from the batch, operator outputs from one SymbolBlock over
all wanted entries, computed by the reference (NumPy) kernels."""
from __future__ import annotations

from typing import Callable

import numpy as np

from ...gluon.symbol_block import SymbolBlock
from ...ndarray import ndarray
from ...symbol.graph import Group, Symbol, var

Entry = tuple


def entry_runner(params: dict, inputs: list[str], want: dict[str, Entry]
                 ) -> Callable[[list[np.ndarray]], dict[str, np.ndarray]]:
    """A function from one batch (arrays in `inputs` order) to {key: value} for every
    `want` entry (key → (node, output index) of the float graph)."""
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

    def run(arrays: list[np.ndarray]) -> dict[str, np.ndarray]:
        arrays = [np.asarray(a).astype(np.float32, copy=False) for a in arrays[:len(inputs)]]
        named = dict(zip(inputs, arrays))
        got = {k: named[name] for k, name in feeds.items()}
        if block is not None:
            outs = block(*[ndarray(a) for a in arrays])
            outs = outs if isinstance(outs, (list, tuple)) else [outs]
            got.update((k, o.asnumpy()) for (k, _), o in zip(ops, outs))
        return got
    return run
