"""Which engine a plain `hybridize()` compiles onto (MXNet's `MXNET_SUBGRAPH_BACKEND`).

`onnxruntime` (the default when the `onnxruntime` and `onnx` packages import): the graph is
partitioned as `optimize_for(backend='onnxruntime')` does, ONNX-expressible regions run by warm
sessions, the rest on the NumPy kernels. `numpy`: the reference kernels only. In order:
`set_default_engine(name)` (this process), `HYBRIDSERVE_ENGINE` (`onnxruntime` | `numpy`, the
variable the server reads too), `MXNET_SUBGRAPH_BACKEND` (`NONE` → numpy; MXNet's CPU backend
names `MKLDNN`/`ONEDNN` → the default), then what is installed. A block's own choice
(`hybridize(backend=...)`) overrides all of them.
"""
from __future__ import annotations

import importlib.util
import os

ORT, NUMPY = "onnxruntime", "numpy"
ENV, MXNET_ENV = "HYBRIDSERVE_ENGINE", "MXNET_SUBGRAPH_BACKEND"
# backend names a user may give for the reference engine (MXNet's NONE disables partitioning)
NUMPY_NAMES = frozenset({"numpy", "none", "reference"})
_chosen: str | None = None


def _ort_importable() -> bool:
    return all(importlib.util.find_spec(m) is not None for m in ("onnxruntime", "onnx"))


def is_numpy(name: str) -> bool:
    return name.strip().lower() in NUMPY_NAMES


def set_default_engine(name: str | None) -> str | None:
    """Choose the default engine for this process (`None`: back to the environment and what
    is installed); returns the previous choice."""
    global _chosen
    if name is not None and not (is_numpy(name) or name.strip().lower() in (ORT, "ort")):
        raise ValueError(f"engine must be 'onnxruntime' or 'numpy', got {name!r}")
    prev, _chosen = _chosen, name
    return prev


def default_engine() -> str:
    """`onnxruntime` or `numpy`, as the setting, the environment and the installation say."""
    for name in (_chosen, os.environ.get(ENV), os.environ.get(MXNET_ENV)):
        if name and name.strip():
            if is_numpy(name):
                return NUMPY
            break
    return ORT if _ort_importable() else NUMPY


def backend_for(asked: str | None) -> str | None:
    """The optimize_for backend a hybridized block compiles with: `asked` (a block's own
    `backend`) when given, else the default engine's; None for the reference engine."""
    name = asked if asked is not None else default_engine()
    return None if is_numpy(name) else name
