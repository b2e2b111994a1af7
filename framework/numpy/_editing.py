"""Array editing of `framework.np`: insert / delete, diff / ediff1d and resize, each one registry
operator (MXNet 2's names and attributes), so they trace. diagonal / diagflat are generated."""
from __future__ import annotations

import numbers

import numpy as _onp

from ..frontend import op as _op
from ._base import as_nd, invoke, is_int_scalar, is_scalar, ndarray, shape_tuple

__all__ = ["insert", "delete", "diff", "ediff1d", "resize"]


def _position(obj, what: str) -> tuple[dict, list]:
    """An index argument → (attrs, extra inputs): an int, a slice, or an integer array."""
    if isinstance(obj, slice):
        return {"start": obj.start, "stop": obj.stop, "step": obj.step}, []
    if is_int_scalar(obj) and not isinstance(obj, bool):
        return {"int_ind": int(obj)}, []
    if isinstance(obj, (list, tuple)) or isinstance(obj, (ndarray, _onp.ndarray)):
        idx = as_nd(_onp.asarray(obj, dtype=_onp.int64) if isinstance(obj, (list, tuple)) else obj)
        if idx.dtype.kind not in "iub":
            raise TypeError(f"'obj' can not support type {idx.dtype}")
        return {}, [idx]
    raise TypeError(f"'obj' can not support type {type(obj)}")


def insert(arr, obj, values, axis=None):
    """`values` inserted before `obj` (int, slice or index array) along `axis`."""
    arr = as_nd(arr)
    attrs, extra = _position(obj, "insert")
    attrs["axis"] = axis
    if isinstance(values, numbers.Number) or is_scalar(values):
        attrs["val"] = float(values)
        inputs = [arr]
    else:
        inputs = [arr, as_nd(values, dtype=arr.dtype)]
    kind = "int" if "int_ind" in attrs else "array" if extra else "slice"
    return invoke(_op(f"np.insert:{kind}"), inputs + extra, attrs)


def delete(arr, obj, axis=None):
    """`arr` without the entries at `obj` (int, slice or index array) along `axis`."""
    attrs, extra = _position(obj, "delete")
    attrs["axis"] = axis
    return invoke(_op("np.delete"), [as_nd(arr)] + extra, attrs)


def diff(a, n=1, axis=-1, prepend=None, append=None):
    if prepend is not None or append is not None:
        raise NotImplementedError("prepend and append options are not supported yet")
    return invoke(_op("np.diff"), [as_nd(a)], {"n": int(n), "axis": int(axis)})


def ediff1d(ary, to_end=None, to_begin=None):
    attrs = {"to_begin_arr_given": False, "to_end_arr_given": False}
    inputs = [as_nd(ary)]
    for name, v in (("to_begin", to_begin), ("to_end", to_end)):
        if v is None:
            continue
        if is_scalar(v):
            attrs[f"{name}_scalar"] = float(v)
        else:
            attrs[f"{name}_arr_given"] = True
            inputs.append(as_nd(v))
    return invoke(_op("np.ediff1d"), inputs, attrs)


def resize(a, new_shape):
    return invoke(_op("np.resize"), [as_nd(a)], {"new_shape": shape_tuple(new_shape)})
