"""The operator methods of `ndarray` (`x + y`, `x[i]`, `x.reshape(...)`, `x.T`), bound to the
`framework.np` functions once that namespace exists: the array type itself knows nothing of the
front end, which is built on it."""
from __future__ import annotations

from types import SimpleNamespace

from ..ndarray import ndarray

_BINARY = [("add", "add"), ("sub", "subtract"), ("mul", "multiply"), ("truediv", "true_divide"),
           ("floordiv", "floor_divide"), ("pow", "power"), ("mod", "mod"), ("matmul", "matmul"),
           ("and", "bitwise_and"), ("or", "bitwise_or"), ("xor", "bitwise_xor")]
_COMPARE = [("lt", "less"), ("le", "less_equal"), ("gt", "greater"), ("ge", "greater_equal"),
            ("eq", "equal"), ("ne", "not_equal")]
_FORWARD = ["reshape", "transpose", "astype", "copy", "flatten", "squeeze", "sum", "mean", "max",
            "min", "prod", "std", "var", "argmax", "argmin", "cumsum", "clip", "dot", "swapaxes",
            "repeat", "tile", "sort", "argsort", "round", "all", "any", "expand_dims", "split",
            "take", "nonzero", "ravel", "broadcast_to", "flip", "topk"]


def bind(namespace: dict) -> None:
    """Give `ndarray` its operators, each calling the function of that name in `namespace`
    (framework.numpy's globals)."""
    front = SimpleNamespace(**namespace)

    def binary(name: str, reflected: bool = False):
        f = getattr(front, name)

        def method(self, other):
            return f(other, self) if reflected else f(self, other)
        method.__name__ = name
        return method

    def inplace(name: str):
        f = getattr(front, name)

        def method(self, other):
            return front._inplace(name, f, self, other)
        return method

    def forward(name: str):
        f = getattr(front, name)

        def method(self, *args, **kwargs):
            return f(self, *args, **kwargs)
        method.__name__ = name
        return method

    for dunder, fn in _BINARY:
        setattr(ndarray, f"__{dunder}__", binary(fn))
        setattr(ndarray, f"__r{dunder}__", binary(fn, reflected=True))
        setattr(ndarray, f"__i{dunder}__", inplace(fn))
    for dunder, fn in _COMPARE:
        setattr(ndarray, f"__{dunder}__", binary(fn))
    for m in _FORWARD:
        setattr(ndarray, m, forward(m))
    ndarray.__neg__ = lambda self: front.negative(self)
    ndarray.__pos__ = lambda self: self
    ndarray.__abs__ = lambda self: front.abs(self)
    ndarray.__invert__ = lambda self: front.invert(self)
    ndarray.__getitem__ = lambda self, key: front._getitem(self, key)
    ndarray.__setitem__ = lambda self, key, value: front._setitem(self, key, value)
    ndarray.T = property(lambda self: front.transpose(self))
    # the last two axes swapped (the Array API's matrix transpose)
    ndarray.mT = property(lambda self: front.linalg.matrix_transpose(self))
