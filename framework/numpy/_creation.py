"""Array creation: array/asarray (constants, not ops) and zeros/ones/full/arange/… (ops)."""
from __future__ import annotations

import numpy as _onp

from ..base import OperatorError
from ..frontend import op as _op
from ._base import (as_nd, default_float, dtype_of, invoke, is_int_scalar, is_np_default_dtype,
                    ndarray, shape_tuple)
from ._shape import broadcast_to

__all__ = ["array", "asarray", "zeros", "ones", "full", "empty", "zeros_like", "ones_like",
           "full_like", "empty_like", "arange", "linspace", "eye", "identity", "copy",
           "from_numpy", "ascontiguousarray"]


def _ctx(device=None, ctx=None):
    d = device if device is not None else ctx
    return "cpu(0)" if d is None else str(d)


def array(object, dtype=None, device=None, ctx=None, copy=True):
    """MXNet `np.array`: a framework array holding a copy of `object`.

    Without `dtype`, framework arrays keep theirs; NumPy arrays and Python data (lists,
    scalars) become float32 (MXNet's default dtype), whatever their element type. Under
    `npx.set_np(dtype=True)` NumPy arrays keep their dtype and Python data become float64.
    """
    dt = dtype_of(dtype)
    if isinstance(object, ndarray):
        src = object._data
    elif isinstance(object, _onp.ndarray):
        src = object
        if dt is None and not is_np_default_dtype():
            dt = default_float()
    elif hasattr(object, "asnumpy"):
        src = object.asnumpy()
    else:
        if dt is None:
            dt = _onp.dtype(object.dtype) if hasattr(object, "dtype") else default_float()
        if isinstance(object, (list, tuple)):
            object = [x.asnumpy() if isinstance(x, ndarray) else x for x in object]
        try:
            return ndarray(_onp.array(object, dtype=dt))
        except OverflowError:   # NumPy 2 refuses out-of-range Python ints; MXNet wraps them
            return ndarray(_onp.array(object).astype(dt))
    if dt is None:
        dt = src.dtype
    return ndarray(_onp.array(src, dtype=dt, copy=True))


def asarray(obj, dtype=None, device=None, ctx=None):
    if isinstance(obj, ndarray) and (dtype is None or obj._data.dtype == dtype_of(dtype)):
        return obj
    return array(obj, dtype=dtype)


def from_numpy(ndarray_, zero_copy=True):
    return ndarray(ndarray_ if zero_copy else ndarray_.copy())


def ascontiguousarray(a, dtype=None):
    return array(a, dtype=dtype)


def _c_order(order, fn: str) -> None:
    """MXNet stores every array C-contiguous: other layouts are refused, not silently ignored."""
    if order != "C":
        raise NotImplementedError(f"`{fn}` only supports order equal to `C`, while received "
                                  f"{order}")


def _init(fn, shape, dtype, device, **extra):
    dt = dtype_of(dtype) or default_float()
    attrs = {"shape": shape_tuple(shape), "ctx": _ctx(device), "dtype": dt, **extra}
    return invoke(_op(fn), [], attrs)


def zeros(shape, dtype=None, order="C", device=None, ctx=None):
    _c_order(order, "zeros")
    return _init("np.zeros", shape, dtype, device or ctx)


def ones(shape, dtype=None, order="C", device=None, ctx=None):
    _c_order(order, "ones")
    return _init("np.ones", shape, dtype, device or ctx)


def empty(shape, dtype=None, order="C", device=None, ctx=None):
    _c_order(order, "empty")
    return _init("np.zeros", shape, dtype, device or ctx)


def full(shape, fill_value, dtype=None, order="C", device=None, ctx=None, out=None):
    _c_order(order, "full")
    if isinstance(fill_value, ndarray):      # an array (0-d too): broadcast, so that it traces
        r = broadcast_to(fill_value.astype(dtype) if dtype else fill_value, shape_tuple(shape))
        return r.copy()
    if dtype is None:   # MXNet 2.x: the fill value's type decides (int → int64)
        if isinstance(fill_value, (bool, _onp.bool_)):
            dtype = _onp.bool_
        elif isinstance(fill_value, _onp.generic):
            dtype = fill_value.dtype
        elif isinstance(fill_value, int):
            dtype = _onp.int64
    res = _init("np.full", shape, dtype, device or ctx, value=float(fill_value))
    if out is not None:
        out._data[...] = res._data
        return out
    return res


def zeros_like(a, dtype=None, order="C", device=None, ctx=None, out=None):
    _c_order(order, "zeros_like")
    return full_like(a, 0, dtype=dtype, device=device)


def ones_like(a, dtype=None, order="C", device=None, ctx=None, out=None):
    _c_order(order, "ones_like")
    return full_like(a, 1, dtype=dtype, device=device)


def empty_like(prototype, dtype=None, order="C", subok=False, shape=None):
    _c_order(order, "empty_like")
    return full_like(prototype, 0, dtype=dtype)


def full_like(a, fill_value, dtype=None, order="C", device=None, ctx=None, out=None):
    _c_order(order, "full_like")
    a = as_nd(a)
    res = invoke(_op("np.full_like"), [a], {"fill_value": float(fill_value), "ctx": _ctx(device),
                                            "dtype": dtype_of(dtype)})
    if out is not None:
        out._data[...] = res._data
        return out
    return res


def arange(start, stop=None, step=1, dtype=None, device=None, ctx=None):
    """Evenly spaced values: float32 unless `dtype` says otherwise, as in MXNet; under
    `npx.set_np(dtype=True)` int64 for integer bounds and step, else float64."""
    step = 1 if step is None else step
    if dtype is None and is_np_default_dtype():
        ints = all(is_int_scalar(v) for v in (start, stop, step) if v is not None)
        dtype = _onp.int64 if ints else _onp.float64
    if step == 0:
        raise ZeroDivisionError("step cannot be 0")
    return invoke(_op("np.arange"), [], {"start": float(start),
                                         "stop": None if stop is None else float(stop),
                                         "step": float(step), "repeat": 1, "infer_range": False,
                                         "ctx": _ctx(device or ctx),
                                         "dtype": dtype_of(dtype) or default_float()})


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0,
             device=None, ctx=None):
    if not is_int_scalar(num):        # MXNet refuses 2.5 samples (NumPy: TypeError)
        raise OperatorError(f"linspace: num must be an integer, got {num!r}")
    res = invoke(_op("np.linspace"), [], {"start": float(start), "stop": float(stop),
                                          "num": int(num), "endpoint": bool(endpoint),
                                          "ctx": _ctx(device or ctx),
                                          "dtype": dtype_of(dtype) or default_float()})
    if retstep:
        div = (num - 1) if endpoint else num
        return res, (stop - start) / div if div > 0 else float("nan")
    return res


def eye(N, M=None, k=0, dtype=None, device=None, ctx=None, **kwargs):
    return invoke(_op("np.eye"), [], {"N": int(N), "M": None if M is None else int(M), "k": int(k),
                                      "ctx": _ctx(device or ctx),
                                      "dtype": dtype_of(dtype) or default_float()})


def identity(n, dtype=None, device=None, ctx=None):
    return eye(n, dtype=dtype, device=device or ctx)


def copy(a, order="C"):
    _c_order(order, "copy")
    return invoke(_op("np.copy"), [as_nd(a)])
