"""Shape manipulation of `framework.np`, recorded with MXNet 2.x's op choices."""
from __future__ import annotations

import numpy as _onp

from ..frontend import op as _op
from ._base import as_nd, axis_tuple, dtype_of, invoke, ndarray, owned, shape_tuple

__all__ = ["reshape", "transpose", "swapaxes", "moveaxis", "rollaxis", "expand_dims", "squeeze",
           "concatenate", "concat", "stack", "vstack", "hstack", "dstack", "column_stack",
           "split", "array_split", "hsplit", "vsplit", "dsplit", "flip", "fliplr", "flipud",
           "tile", "repeat", "broadcast_to", "broadcast_arrays", "ravel", "flatten", "astype",
           "take", "sort", "argsort", "topk", "nonzero", "atleast_1d", "atleast_2d",
           "atleast_3d", "roll", "append", "shape", "size", "ndim", "trace", "meshgrid"]


def _shape_args(args, kw, *names):
    for n in names:
        if n in kw:
            return shape_tuple(kw.pop(n))
    if len(args) == 1 and (isinstance(args[0], (list, tuple)) or args[0] is None):
        return args[0] if args[0] is None else shape_tuple(args[0])
    return tuple(int(a) for a in args)


def reshape(a, *newshape, order="C", **kw):
    """`np.reshape(a, shape)` and `x.reshape(2, 3)` / `x.reshape((2, 3))` (op: npx.reshape's)."""
    shp = _shape_args(newshape, kw, "newshape", "shape")
    if kw.pop("reverse", False):
        raise TypeError("reshape() got an unexpected keyword argument 'reverse'")
    if kw:
        raise TypeError(f"reshape() got unexpected keyword arguments {sorted(kw)}")
    if order != "C":
        raise NotImplementedError("reshape: only order='C' is supported")
    if sum(1 for d in shp if d == -1) > 1:
        raise ValueError("can only specify one unknown dimension")
    if any(d < -1 for d in shp):
        raise ValueError(f"invalid shape {shp}: negative dimensions other than -1")
    a = as_nd(a)
    return owned(invoke(_op("np.reshape"), [a], {"newshape": shp, "reverse": False,
                                                 "order": "C"}), a)


def ravel(x, order="C"):
    if order != "C":
        raise NotImplementedError(f"order {order} is not supported")
    x = as_nd(x)
    return owned(invoke(_op("np.reshape"), [x], {"newshape": (-1,), "reverse": False,
                                                 "order": "C"}),
                 x)


def flatten(x, order="C"):
    return ravel(x, order)


def transpose(a, *axes, **kw):
    """`np.transpose(a, axes)`, `x.transpose()`, `x.transpose(1, 0)`."""
    if "axes" in kw:
        axes = (kw.pop("axes"),)
    ax = _shape_args(axes, {}) if axes else None
    if ax == ():
        ax = None
    a = as_nd(a)
    return owned(invoke(_op("np.transpose"), [a], {"axes": ax}), a)


def swapaxes(a, axis1, axis2):
    a = as_nd(a)
    return owned(invoke(_op("np.swapaxes"), [a], {"dim1": int(axis1), "dim2": int(axis2)}), a)


def moveaxis(a, source, destination):
    a = as_nd(a)
    return owned(invoke(_op("np.moveaxis"), [a], {"source": axis_tuple(source),
                                                  "destination": axis_tuple(destination)}), a)


def rollaxis(a, axis, start=0):
    a = as_nd(a)
    n = a.ndim
    axis = axis + n if axis < 0 else axis
    start = start + n if start < 0 else start
    if axis < start:
        start -= 1
    if axis == start:
        return a
    return moveaxis(a, axis, start)


def expand_dims(a, axis):
    a = src = as_nd(a)
    if isinstance(axis, (list, tuple)):
        out_nd = a.ndim + len(axis)
        for ax in sorted(x + out_nd if x < 0 else x for x in axis):
            a = invoke("expand_dims", [a], {"axis": ax})
        return owned(a, src)
    return owned(invoke("expand_dims", [a], {"axis": int(axis)}), src)


def squeeze(a, axis=None):
    a = as_nd(a)
    return owned(invoke(_op("np.squeeze"), [a], {"axis": axis_tuple(axis)}), a)


def concatenate(seq, axis=0, out=None):
    """Join arrays (op `Concat`; the flattening `np.concatenate:flat` op when axis is None)."""
    arrs = [as_nd(x) for x in seq]
    if axis is None:
        res = invoke(_op("np.concatenate:flat"), arrs, {"num_args": len(arrs), "axis": None})
    else:
        res = invoke("Concat", arrs, {"dim": int(axis), "num_args": len(arrs)})
    if out is not None:
        out._data[...] = res._data
        return out
    return res


concat = concatenate


def stack(arrays, axis=0, out=None):
    arrs = [as_nd(x) for x in arrays]
    res = invoke("stack", arrs, {"axis": int(axis), "num_args": len(arrs)})
    if out is not None:
        out._data[...] = res._data
        return out
    return res


def atleast_1d(*arys):
    res = [as_nd(a) if as_nd(a).ndim >= 1 else reshape(a, (1,)) for a in arys]
    return res[0] if len(res) == 1 else res


def atleast_2d(*arys):
    res = []
    for a in arys:
        a = as_nd(a)
        res.append(a if a.ndim >= 2 else reshape(a, (1, -1) if a.ndim == 1 else (1, 1)))
    return res[0] if len(res) == 1 else res


def atleast_3d(*arys):
    res = []
    for a in arys:
        a = as_nd(a)
        if a.ndim == 0:
            a = reshape(a, (1, 1, 1))
        elif a.ndim == 1:
            a = reshape(a, (1, -1, 1))
        elif a.ndim == 2:
            a = expand_dims(a, 2)
        res.append(a)
    return res[0] if len(res) == 1 else res


def vstack(arrays, out=None):
    return concatenate([atleast_2d(a) for a in arrays], axis=0, out=out)


def hstack(arrays):
    arrs = [atleast_1d(a) for a in arrays]
    return concatenate(arrs, axis=0 if arrs[0].ndim == 1 else 1)


def dstack(arrays):
    return concatenate([atleast_3d(a) for a in arrays], axis=2)


def column_stack(tup):
    arrs = [as_nd(a) for a in tup]
    arrs = [reshape(a, (-1, 1)) if a.ndim < 2 else a for a in arrs]
    return concatenate(arrs, axis=1)


def _split(ary, indices_or_sections, axis, squeeze_axis=False):
    a = as_nd(ary)
    if isinstance(indices_or_sections, int):
        attrs = {"indices": (), "axis": int(axis), "squeeze_axis": squeeze_axis,
                 "sections": int(indices_or_sections)}
    else:
        attrs = {"indices": (0,) + tuple(int(i) for i in indices_or_sections),
                 "axis": int(axis), "squeeze_axis": squeeze_axis, "sections": 0}
    res = invoke("_split_v2", [a], attrs)
    return [owned(r, a) for r in res] if isinstance(res, tuple) else [owned(res, a)]


def split(ary, indices_or_sections, axis=0):
    """Split into equal sections or at indices (op `_split_v2`); returns a list."""
    if isinstance(indices_or_sections, int):
        n = as_nd(ary).shape[axis]
        if indices_or_sections <= 0 or n % indices_or_sections:
            raise ValueError("array split does not result in an equal division")
    return _split(ary, indices_or_sections, axis)


def array_split(ary, indices_or_sections, axis=0):
    a = as_nd(ary)
    if isinstance(indices_or_sections, int):
        n = a.shape[axis]
        k = indices_or_sections
        if k <= 0:
            raise ValueError("number sections must be larger than 0")
        each, extra = divmod(n, k)
        sizes = [each + 1] * extra + [each] * (k - extra)
        idx = list(_onp.cumsum(sizes)[:-1])
        if n % k == 0:
            return _split(a, k, axis)
        return _split(a, idx, axis)
    return _split(a, indices_or_sections, axis)


def hsplit(ary, indices_or_sections):
    return split(ary, indices_or_sections, axis=1 if as_nd(ary).ndim > 1 else 0)


def _need_ndim(ary, n: int, fn: str):
    ary = as_nd(ary)
    if ary.ndim < n:
        raise ValueError(f"{fn} only works on arrays of {n} or more dimensions")
    return ary


def vsplit(ary, indices_or_sections):
    return split(_need_ndim(ary, 2, "vsplit"), indices_or_sections, axis=0)


def dsplit(ary, indices_or_sections):
    return split(_need_ndim(ary, 3, "dsplit"), indices_or_sections, axis=2)


def flip(m, axis=None, out=None):
    m = as_nd(m)
    res = owned(invoke(_op("np.flip"), [m], {"axis": axis_tuple(axis)}), m)
    if out is not None:
        out._data[...] = res._data
        return out
    return res


def fliplr(m):
    return flip(m, 1)


def flipud(m):
    return flip(m, 0)


def tile(A, reps):
    return invoke("tile", [as_nd(A)], {"reps": shape_tuple(reps)})


def repeat(a, repeats, axis=None):
    """np.repeat; MXNet 2.x records axis≠0 as SwapAxis → repeat on axis 0 → SwapAxis."""
    a = as_nd(a)
    reps = tuple(int(r) for r in repeats) if isinstance(repeats, (list, tuple)) else (int(repeats),)
    if axis is None or axis == 0 or (axis == -a.ndim):
        return invoke(_op("np.repeat"), [a], {"repeats": reps, "axis": None if axis is None else 0})
    ax = axis + a.ndim if axis < 0 else axis
    t = swapaxes(a, 0, ax)
    t = invoke(_op("np.repeat"), [t], {"repeats": reps, "axis": 0})
    return swapaxes(t, 0, ax)


def broadcast_to(array, shape):
    array = as_nd(array)
    return owned(invoke(_op("np.broadcast_to"), [array], {"shape": shape_tuple(shape)}), array)


def broadcast_arrays(*args):
    arrs = [as_nd(a) for a in args]
    shp = _onp.broadcast_shapes(*[a.shape for a in arrs])
    return [a if a.shape == shp else broadcast_to(a, shp) for a in arrs]


def astype(a, dtype, order="K", casting="unsafe", subok=True, copy=True):
    """`x.astype(dtype, copy=True)` (op `Cast`)."""
    a = as_nd(a)
    dt = dtype_of(dtype)
    if not copy and a._data.dtype == dt:
        return a
    return invoke("Cast", [a], {"dtype": dt})


def take(a, indices, axis=None, mode="raise", out=None):
    a = as_nd(a)
    scalar_idx = isinstance(indices, (int, _onp.integer))
    idx = as_nd(_onp.asarray(indices, dtype=_onp.int64)) if not isinstance(indices, ndarray) \
        else indices
    if axis is None:
        a = ravel(a)
        axis = 0
    res = invoke("take", [a, idx], {"axis": int(axis), "mode": mode})
    del scalar_idx
    if out is not None:
        out._data[...] = res._data
        return out
    return res


def sort(a, axis=-1, descending=False, stable=True, *, kind=None, order=None):
    """MXNet 2's (Array-API) signature: the third positional argument is `descending`."""
    a = as_nd(a)
    if axis is None:
        a, axis = ravel(a), -1
    return invoke("sort", [a], {"axis": axis, "is_ascend": not descending})


def argsort(a, axis=-1, descending=False, stable=True, *, kind=None, order=None):
    """MXNet 2's (Array-API) signature: the third positional argument is `descending`."""
    a = as_nd(a)
    if axis is None:
        a, axis = ravel(a), -1
    return invoke("argsort", [a], {"axis": axis, "is_ascend": not descending,
                                   "dtype": _onp.dtype(_onp.int64)})


def topk(a, k=1, axis=-1, ret_typ="indices", is_ascend=False, dtype="float32"):
    return invoke("topk", [as_nd(a)], {"axis": axis, "k": int(k), "ret_typ": ret_typ,
                                       "is_ascend": bool(is_ascend), "dtype": dtype_of(dtype)})


def nonzero(a):
    a = as_nd(a)
    if a.ndim == 0:     # MXNet (NumPy 1.x) reads a 0-d array as 1-d; NumPy 2 refuses it
        a = reshape(a, (1,))
    idx = invoke(_op("np.nonzero"), [a])
    return tuple(ndarray(_onp.ascontiguousarray(idx._data[:, i])) for i in range(idx.shape[1]))


def roll(a, shift, axis=None):
    return invoke(_op("np.roll"), [as_nd(a)], {"shift": axis_tuple(shift),
                                               "axis": axis_tuple(axis)})


def append(arr, values, axis=None):
    arr, values = as_nd(arr), as_nd(values)
    if axis is None:
        return concatenate([ravel(arr), ravel(values)], axis=0)
    return concatenate([arr, values], axis=axis)


def shape(a):
    return as_nd(a).shape


def size(a, axis=None):
    a = as_nd(a)
    return a.size if axis is None else a.shape[axis]


def ndim(a):
    return as_nd(a).ndim


def trace(a, offset=0, axis1=0, axis2=1, out=None):
    return invoke(_op("np.trace"), [as_nd(a)], {"offset": int(offset), "axis1": int(axis1),
                                                "axis2": int(axis2)})


def meshgrid(*xi, indexing="xy", sparse=False, copy=True):
    outs = _onp.meshgrid(*[as_nd(x)._data for x in xi], indexing=indexing, sparse=sparse)
    return [ndarray(o.copy()) for o in outs]
