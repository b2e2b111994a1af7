"""Input dtype validation: ops that compute data against parameters need both in one dtype.

MXNet refuses, at type inference, a float64 (or integer) input to a float32 FullyConnected or
Convolution. Without this check NumPy would silently promote and return float64. Run once per new
input-dtype signature of a cached op, so the per-call cost is a tuple comparison.
"""
from __future__ import annotations

import numpy as np

from ..base import OperatorError
from ..symbol.graph import Symbol
from ..symbol.infer import infer_dtypes

def check_input_dtypes(sym: Symbol, dtypes: dict[str, np.dtype], where: str = "") -> None:
    """Raise OperatorError naming the node and op whose data and parameter dtypes differ
    (the inputs each op's `OpDef.dtype_pair` names)."""
    dts = infer_dtypes(sym, dtypes)
    for n in sym.topo():
        pair = None if n.is_var else n.op.dtype_pair
        if pair is None:
            continue
        names = n.op.input_names(n.parsed)
        if pair[0] not in names or pair[1] not in names:
            continue
        i, j = names.index(pair[0]), names.index(pair[1])
        if max(i, j) >= len(n.inputs):
            continue
        di = dts.get((id(n.inputs[i][0]), n.inputs[i][1]))
        dj = dts.get((id(n.inputs[j][0]), n.inputs[j][1]))
        if di is not None and dj is not None and di != dj:
            raise OperatorError(
                f"{where}node '{n.name}' (op {n.opname}): input '{pair[0]}' has dtype {di} but "
                f"'{pair[1]}' has dtype {dj}; cast the input to {dj}")
