"""Indexing of framework arrays: `x[key]`, `x[key] = v`, and the in-place operators (`x += y`).

Imperatively, basic indexing returns a NumPy view when the selected elements are one contiguous
run of the flat buffer and a copy otherwise, as MXNet does (it can only alias a flat range:
`x[:, :, 1] = …` through such a result never reaches `x`); advanced indexing copies. While tracing, keys are recorded as MXNet 2.x records them in
deferred-compute mode: an integer → `slice` (begin k, end k+1) + `npx.reshape (-3, -4)`; a step-1
slice → `slice` on axis 0; a stepped slice → `slice` with step; a tuple of ints/slices → one
`slice` with begin/end/step lists + `npx.reshape` (-2 keep, -3 drop, -4 rest). `None` and
`Ellipsis` (rejected by MXNet in a HybridBlock) are supported here with extra `expand_dims` nodes.
"""
from __future__ import annotations

import numbers

import numpy as _onp

from ..base import MXNetError
from ..frontend import op as _op
from ._base import as_nd, invoke, ndarray, tracing
from ._shape import stack

__all__: list[str] = []


def _is_int(k) -> bool:
    return isinstance(k, (numbers.Integral, _onp.integer)) and not isinstance(k, (bool, _onp.bool_))


def _key_to_numpy(key):
    if isinstance(key, ndarray):
        return key._data
    if isinstance(key, tuple):
        return tuple(k._data if isinstance(k, ndarray) else k for k in key)
    return key


def _is_basic(key) -> bool:
    ks = key if isinstance(key, tuple) else (key,)
    return all(_is_int(k) or isinstance(k, slice) or k is None or k is Ellipsis for k in ks)


def _getitem(x, key):
    if not tracing():
        k = _key_to_numpy(key)
        if isinstance(k, list):
            arr = _onp.asarray(k)
            k = arr if arr.dtype == _onp.bool_ else arr.astype(_onp.int64) if arr.size else arr
        r = x._data[k]
        if not isinstance(r, _onp.ndarray):
            return ndarray(_onp.asarray(r))
        if _is_basic(k) and not _flat_range(k, x.shape):
            r = r.copy()
        return ndarray(r)
    return _traced_getitem(x, key)


def _flat_range(key, shape: tuple) -> bool:
    """MXNet's rule for a basic key: the result is a view only when, read from the last axis
    back, once one axis takes a proper subset every axis before it takes at most one element
    (and no axis takes several elements with a step other than 1)."""
    ks = key if isinstance(key, tuple) else (key,)
    if any(k is Ellipsis for k in ks):
        ks = tuple(_expand_ellipsis(ks, len(shape)))
    real = [k for k in ks if k is not None]
    real += [slice(None)] * (len(shape) - len(real))
    lens = []
    for k, n in zip(real, shape):
        if isinstance(k, slice):
            lens.append((len(range(*k.indices(n))), k.indices(n)[2]))
        else:
            lens.append((1, 1))
    if any(m == 0 for m, _ in lens) or int(_onp.prod([m for m, _ in lens])) == 1:
        return True
    subset = False
    for (m, step), n in zip(reversed(lens), reversed(shape)):
        if m > 1 and step != 1:
            return False
        if subset and m > 1:
            return False
        subset = subset or m < n
    return True


def _traced_getitem(x, key):
    shape = x.shape
    if isinstance(key, (bool, _onp.bool_)):
        raise MXNetError("boolean scalar indexing is not supported in a hybridized forward")
    if isinstance(key, tuple) and len(key) == 0:
        return x
    if _is_int(key):
        k = int(key)
        n = shape[0]
        if not -n <= k < n:
            raise IndexError(f"index {k} is out of bounds for axis 0 with size {n}")
        k = k + n if k < 0 else k
        s = invoke("slice", [x], {"begin": (k,), "end": (k + 1,)})
        return invoke(_op("np.reshape"), [s], {"newshape": (-3, -4)})
    if isinstance(key, slice):
        if key.step is None or key.step == 1:
            if key.start is None and key.stop is None:
                return x
            b, e, _ = key.indices(shape[0])
            e = max(e, b)
            return invoke("slice", [x], {"begin": (b,), "end": (e,)})
        if key.step == 0:
            raise ValueError("slice step cannot be zero")
        return invoke("slice", [x], {"begin": (key.start,), "end": (key.stop,),
                                     "step": (key.step,)})
    if isinstance(key, ndarray) and key.dtype == _onp.bool_:
        flat = invoke(_op("np.reshape"), [x], {"newshape": (-1,) + tuple(shape[key.ndim:]),
                                               "reverse": False, "order": "C"})
        m = invoke(_op("np.reshape"), [key], {"newshape": (-1,), "reverse": False, "order": "C"})
        return invoke(_op("np.ndarray.__getitem__:mask"), [flat, m], {"axis": 0})
    if isinstance(key, ndarray) or isinstance(key, list):
        idx = key if isinstance(key, ndarray) else as_nd(_onp.asarray(key, dtype=_onp.int64))
        return invoke("take", [x, idx], {"axis": 0, "mode": "wrap"})
    if not isinstance(key, tuple):
        raise MXNetError(f"The type of indexing used ({type(key).__name__}) is not supported in "
                         "HybridBlock.")
    if not _is_basic(key):
        if all(isinstance(k, ndarray) for k in key):
            idx = stack(list(key))
            return invoke("gather_nd", [x, idx])
        raise MXNetError("The type of indexing used is not supported in HybridBlock.")
    return _traced_basic(x, key)


def _traced_basic(x, key: tuple):
    """A tuple of ints, slices, `None` and one `...`: one slice, one reshape, new axes."""
    shape = x.shape
    expanded = _expand_ellipsis(key, len(shape))
    real = [k for k in expanded if k is not None]
    out = x
    if real:
        begin, end, step, newshape = _slice_spec(real, shape)
        out = invoke("slice", [x], {"begin": begin, "end": end, "step": step})
        out = invoke(_op("np.reshape"), [out], {"newshape": newshape + (-4,),
                                                "reverse": False, "order": "C"})
    # None → new axes; positions count in the output without the dropped integer axes
    pos = 0
    for k in expanded:
        if k is None:
            out = invoke("expand_dims", [out], {"axis": pos})
        if not _is_int(k):
            pos += 1
    return out


def _expand_ellipsis(key: tuple, ndim: int) -> list:
    n_real = sum(1 for k in key if k is not None and k is not Ellipsis)
    if sum(1 for k in key if k is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if n_real > ndim:
        raise IndexError(f"too many indices for array: array is {ndim}-dimensional, but "
                         f"{n_real} were indexed")
    expanded = []
    for k in key:
        if k is Ellipsis:
            expanded.extend([slice(None)] * (ndim - n_real))
        else:
            expanded.append(k)
    return expanded


def _slice_spec(real: list, shape: tuple) -> tuple:
    """`slice` begin/end/step and the `npx.reshape` codes (-2 keep, -3 drop an int's axis)."""
    begin, end, step, newshape = [], [], [], []
    for ax, k in enumerate(real):
        if isinstance(k, slice):
            if k.step == 0:
                raise ValueError("slice step cannot be zero")
            begin.append(k.start)
            end.append(k.stop)
            step.append(k.step)
            newshape.append(-2)
            continue
        k = int(k)
        if not -shape[ax] <= k < shape[ax]:
            raise IndexError(f"index {k} is out of bounds for axis {ax} with size {shape[ax]}")
        begin.append(k)
        end.append(k + 1 if k >= 0 else k - 1)
        step.append(1 if k >= 0 else -1)
        newshape.append(-3)
    return tuple(begin), tuple(end), tuple(step), tuple(newshape)


def _setitem(x, key, value):
    if tracing():
        raise MXNetError("In-place assignment (x[key] = value) is not supported inside a "
                         "hybridized forward; build the result with np.where / concatenate "
                         "instead.")
    k = _key_to_numpy(key)
    if isinstance(k, list):
        arr = _onp.asarray(k)
        k = arr if arr.dtype == _onp.bool_ else arr.astype(_onp.int64)
    v = value._data if isinstance(value, ndarray) else value
    if isinstance(v, (list, tuple)):
        v = _onp.asarray(v)
    if not x._data.flags.writeable:
        x._data = x._data.copy()
    x._data[k] = v


_FAST = {"add": _onp.add, "subtract": _onp.subtract, "multiply": _onp.multiply,
         "true_divide": _onp.true_divide}


def _inplace(fn_name, fn, x, other):
    """`x += y` & co. (`fn`: the out-of-place `np.<fn_name>`): outside a trace write into x's
    buffer and return x; inside, out-of-place."""
    d = x._data
    if not tracing() and fn_name in _FAST and d.dtype.kind == "f" and d.flags.writeable:
        o = other._data if isinstance(other, ndarray) else other
        if (isinstance(o, _onp.ndarray) and o.dtype == d.dtype) or \
                (isinstance(o, (int, float)) and not isinstance(o, bool)):
            _FAST[fn_name](d, o, out=d)
            return x
    res = fn(x, other)
    if res is NotImplemented:
        return NotImplemented
    if tracing():
        return res
    if res.shape != x.shape:
        raise ValueError(f"non-broadcastable output operand with shape {x.shape} doesn't match "
                         f"the broadcast shape {res.shape}")
    if not x._data.flags.writeable:
        x._data = x._data.copy()
    _onp.copyto(x._data, res._data, casting="unsafe")
    return x
