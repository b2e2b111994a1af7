"""npx.save / savez / load (MXNet 2.x file formats), waitall, from_numpy."""
from __future__ import annotations

import os

import numpy as _onp

from ..io.atomic import write_atomic
from ..io.params_file import load_params, save_params
from ..ndarray import ndarray


def _np(x) -> _onp.ndarray:
    if isinstance(x, ndarray):
        return x._data
    if isinstance(x, _onp.ndarray):
        return x
    raise TypeError(f"expected an ndarray, got {type(x).__name__}")


def save(file, arr) -> None:
    """Save one array as a `.npy` file (what MXNet 2.x's `npx.save` writes)."""
    if not isinstance(arr, (ndarray, _onp.ndarray)):
        raise ValueError("data needs to either be a MXNet ndarray")
    _save_npy(os.fspath(file), _np(arr))


def _save_npy(path: str, data: _onp.ndarray) -> None:
    import io
    buf = io.BytesIO()
    # not ascontiguousarray: it turns a 0-d array into shape (1,)
    data = data if data.flags.c_contiguous else data.copy(order="C")
    _onp.lib.format.write_array(buf, data, allow_pickle=False)
    write_atomic(path, buf.getvalue())


def savez(file, *args, **kwds) -> None:
    """Save several arrays into an uncompressed `.npz` (positional ones as `arr_0`, `arr_1`…)."""
    arrays = {}
    for i, arg in enumerate(args):
        name = f"arr_{i}"
        if name in kwds:
            raise ValueError(f"Naming conflict between arg {i} and kwargs.")
        arrays[name] = arg
    arrays.update(kwds)
    for k, v in arrays.items():
        if not isinstance(k, str) or not isinstance(v, (ndarray, _onp.ndarray)):
            raise TypeError("Only accepts dict str->ndarray or list of ndarrays")
    save_params(os.fspath(file), {k: _np(v) for k, v in arrays.items()}, format="npz")


def load(file):
    """Load `.npy` (one array), `.npz` (dict) or a legacy MXNet file (list or dict)."""
    res = load_params(os.fspath(file))
    if isinstance(res, dict):
        return {k: None if v is None else ndarray(v) for k, v in res.items()}
    if len(res) == 1:
        return ndarray(res[0])
    return [None if v is None else ndarray(v) for v in res]


def waitall() -> None:
    """Execution is synchronous: nothing to wait for."""


def from_numpy(ndarray_, zero_copy=True):
    """Wrap a NumPy array as a framework array (zero-copy unless `zero_copy=False`)."""
    a = _onp.asarray(ndarray_)
    return ndarray(a if zero_copy else a.copy())


def gpu_memory_info(device_id=0):
    raise RuntimeError("hybridserve runs on the CPU only: no GPU memory to report")
