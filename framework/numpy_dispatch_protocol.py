"""NumPy's dispatch protocols for framework arrays (`__array_function__`, `__array_ufunc__`).

An official NumPy function called on framework arrays runs `framework.np`'s function of the same
name when MXNet's lists below name it (the result is a framework array, and the call is an
operator, so it traces), and NumPy's own otherwise: that fallback computes on the arrays' NumPy
buffers and hands NumPy-array results back as framework arrays, as MXNet's fallback does.
Ufunc methods other than a call (`np.add.reduce`) are not dispatched: NumPy then raises.
The two name lists are MXNet 2's (`mxnet.numpy_dispatch_protocol`).
"""
from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as _onp

from . import numpy as _mx_np
from .ndarray import ndarray

__all__ = ["with_array_function_protocol", "with_array_ufunc_protocol",
           "_NUMPY_ARRAY_FUNCTION_LIST", "_NUMPY_ARRAY_UFUNC_LIST"]

_NUMPY_ARRAY_FUNCTION_LIST = [
    "all", "any", "sometrue", "argmin", "argmax", "around", "round", "round_", "argsort", "sort",
    "append", "broadcast_arrays", "broadcast_to", "clip", "concatenate", "copy", "cumsum", "diag",
    "diagonal", "diagflat", "dot", "expand_dims", "fix", "flip", "flipud", "fliplr", "inner",
    "insert", "interp", "max", "amax", "mean", "min", "amin", "nonzero", "ones_like",
    "atleast_1d", "atleast_2d", "atleast_3d", "prod", "product", "ravel", "repeat", "reshape",
    "roll", "split", "array_split", "hsplit", "vsplit", "dsplit", "squeeze", "stack", "std",
    "sum", "swapaxes", "take", "tensordot", "tile", "transpose", "unique", "unravel_index",
    "flatnonzero", "diag_indices_from", "delete", "var", "vdot", "vstack", "column_stack",
    "hstack", "dstack", "zeros_like", "linalg.norm", "linalg.cholesky", "linalg.inv",
    "linalg.solve", "linalg.tensorinv", "linalg.tensorsolve", "linalg.lstsq", "linalg.pinv",
    "linalg.eigvals", "linalg.eig", "linalg.eigvalsh", "linalg.eigh", "linalg.qr",
    "linalg.matrix_rank", "shape", "trace", "tril", "triu", "meshgrid", "outer", "kron",
    "einsum", "polyval", "shares_memory", "may_share_memory", "quantile", "median",
    "percentile", "diff", "ediff1d", "resize", "where", "full_like", "bincount", "empty_like",
    "nan_to_num", "isnan", "isfinite", "isposinf", "isneginf", "isinf", "pad", "cross",
]

_NUMPY_ARRAY_UFUNC_LIST = [
    "abs", "fabs", "add", "arctan2", "copysign", "degrees", "hypot", "lcm", "gcd", "logaddexp",
    "subtract", "multiply", "floor_divide", "true_divide", "negative", "power", "mod", "fmod",
    "matmul", "absolute", "rint", "sign", "exp", "log", "log2", "log10", "expm1", "sqrt",
    "square", "cbrt", "reciprocal", "invert", "bitwise_not", "remainder", "sin", "cos", "tan",
    "sinh", "cosh", "tanh", "arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh",
    "maximum", "fmax", "minimum", "fmin", "ceil", "trunc", "floor", "bitwise_and",
    "bitwise_xor", "bitwise_or", "logical_and", "logical_or", "logical_xor", "logical_not",
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
]


def _protocol_wrapper(kind: str):
    def decorate(func: Callable) -> Callable:
        @functools.wraps(func)
        def run(*args, **kwargs):
            try:
                func(*args, **kwargs)
            except Exception as e:  # noqa: BLE001 (MXNet reports any failure this way)
                raise RuntimeError(f"Running function {func.__name__} with NumPy array {kind} "
                                   f"protocol failed with exception {e}") from e
        return run
    return decorate


with_array_function_protocol = _protocol_wrapper("function")
with_array_ufunc_protocol = _protocol_wrapper("ufunc")


def _lookup(module, dotted: str):
    obj = module
    for part in dotted.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def _function_table() -> dict:
    """NumPy function object → framework function (names NumPy 2 no longer has are skipped)."""
    table = {}
    for name in _NUMPY_ARRAY_FUNCTION_LIST:
        onp_fn, mx_fn = _lookup(_onp, name), _lookup(_mx_np, name)
        if onp_fn is not None and mx_fn is not None:
            table[onp_fn] = mx_fn
    return table


_FUNCTIONS = _function_table()
_UFUNCS = {n: getattr(_mx_np, n) for n in _NUMPY_ARRAY_UFUNC_LIST if hasattr(_mx_np, n)}
_ZERO_COPY = {_onp.shares_memory, _onp.may_share_memory}


def _to_numpy(obj):
    """Framework arrays (also inside lists, tuples, dicts) → their NumPy buffers."""
    if isinstance(obj, ndarray):
        return obj._data
    if isinstance(obj, (list, tuple)):
        return type(obj)(_to_numpy(o) for o in obj)
    if isinstance(obj, dict):
        return {k: _to_numpy(v) for k, v in obj.items()}
    return obj


def _to_framework(obj, inputs: list):
    """NumPy-array results → framework arrays; a view of an input is copied (MXNet's fallback
    returns fresh arrays)."""
    if isinstance(obj, _onp.ndarray):
        if any(_onp.may_share_memory(obj, i) for i in inputs):
            obj = obj.copy()
        return ndarray(obj)
    if isinstance(obj, (list, tuple)) and not hasattr(obj, "_fields"):
        return type(obj)(_to_framework(o, inputs) for o in obj)
    return obj


def _buffers(obj, out: list) -> list:
    if isinstance(obj, ndarray):
        out.append(obj._data)
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            _buffers(o, out)
    elif isinstance(obj, dict):
        for o in obj.values():
            _buffers(o, out)
    return out


def _fallback(func: Callable, args, kwargs):
    inputs = _buffers([args, kwargs], [])
    return _to_framework(func(*_to_numpy(args), **_to_numpy(kwargs)), inputs)


def _as_framework_args(obj):
    if isinstance(obj, _onp.ndarray):
        return ndarray(obj)
    if isinstance(obj, (list, tuple)):
        return type(obj)(_as_framework_args(o) for o in obj)
    return obj


def array_function(self, func, types, args, kwargs):
    impl = _FUNCTIONS.get(func)
    if impl is None or func in _ZERO_COPY:
        return _fallback(func, args, kwargs)
    try:
        return impl(*_as_framework_args(args), **{k: _as_framework_args(v)
                                                 for k, v in kwargs.items()})
    except TypeError:     # a NumPy keyword the framework function does not take
        return _fallback(func, args, kwargs)


def array_ufunc(self, ufunc, method, *inputs, **kwargs):
    if method != "__call__":
        return NotImplemented
    out = kwargs.pop("out", None)
    if out is not None:
        out = out[0] if isinstance(out, tuple) and len(out) == 1 else out
        if isinstance(out, _onp.ndarray):     # `onp_array += mx_array`: NumPy keeps the type
            return ufunc(*_to_numpy(inputs), out=out, **kwargs)
    impl = _UFUNCS.get(ufunc.__name__)
    if impl is None:
        res = _fallback(ufunc, inputs, kwargs)
    else:
        res = impl(*_as_framework_args(inputs), **kwargs)
    if out is not None and isinstance(out, ndarray) and isinstance(res, ndarray):
        _onp.copyto(out._data, res._data, casting="unsafe")
        return out
    return res


def install() -> None:
    """Give `ndarray` the two protocol methods."""
    ndarray.__array_function__ = array_function
    ndarray.__array_ufunc__ = array_ufunc


install()
