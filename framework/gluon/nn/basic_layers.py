"""Containers and basic layers: Sequential, HybridSequential, Dense, Dropout, Flatten, Lambda, …"""
from __future__ import annotations

import warnings

from ... import numpy as _np, numpy_extension as _npx
from ...dispatch import invoke
from ..block import Block, _indent
from ..hybrid_block import HybridBlock
from ..parameter import Parameter
from .activations import Activation


def _seq_repr(self) -> str:
    modstr = "\n".join(f"  ({k}): {_indent(repr(b), 2)}" for k, b in self._child_items())
    return f"{self.__class__.__name__}(\n{modstr}\n)"


def _seq_forward(self, x, *args):
    for _, block in self._child_items():
        x = block(x, *args)
        args = []
        if isinstance(x, (tuple, list)):
            args = x[1:]
            x = x[0]
    if args:
        x = tuple([x] + list(args))
    return x


class _SeqMixin:
    _summary_row = False         # a container: summary() lists its children, not itself

    def add(self, *blocks) -> None:
        for b in blocks:
            self._layers.append(b)
            self.register_child(b)

    def __getitem__(self, key):
        layers = list(self._children.values())[key]
        if isinstance(layers, list):
            net = type(self)()
            net.add(*(ref() for ref in layers))
            return net
        return layers()

    def __len__(self) -> int:
        return len(self._children)

    __repr__ = _seq_repr
    forward = _seq_forward


class Sequential(_SeqMixin, Block):
    """Stacks Blocks sequentially."""

    def __init__(self):
        super().__init__()
        self._layers: list[Block] = []

    def hybridize(self, active: bool = True, **kwargs) -> None:
        if self._children and all(isinstance(c, HybridBlock) for _, c in self._child_items()):
            warnings.warn(f"All children of this Sequential layer '{repr(self)}'\n are "
                          "HybridBlocks. Consider using HybridSequential for the best performance.",
                          stacklevel=2)
        super().hybridize(active, **kwargs)


class HybridSequential(_SeqMixin, HybridBlock):
    """Stacks HybridBlocks sequentially."""

    def __init__(self):
        super().__init__()
        self._layers: list[HybridBlock] = []


class Dense(HybridBlock):
    """Fully connected layer: `activation(dot(x, weight.T) + bias)`."""

    def __init__(self, units: int, activation=None, use_bias: bool = True, flatten: bool = True,
                 dtype="float32", weight_initializer=None, bias_initializer="zeros",
                 in_units: int = 0, **kwargs):
        super().__init__(**kwargs)
        self._flatten = flatten
        self._units = units
        self._in_units = in_units
        self.weight = Parameter("weight", shape=(units, in_units), init=weight_initializer,
                                dtype=dtype, allow_deferred_init=True)
        if use_bias:
            self.bias = Parameter("bias", shape=(units,), init=bias_initializer, dtype=dtype,
                                  allow_deferred_init=True)
        else:
            self.bias = None
        if activation is not None:
            self.act = Activation(activation)
        else:
            self.act = None

    def forward(self, x):
        inputs = [x, self.weight.data()] + ([self.bias.data()] if self.bias is not None else [])
        out = invoke("FullyConnected", inputs, {"num_hidden": self._units, "no_bias": self.bias is None,
                                                "flatten": self._flatten})
        return self.act(out) if self.act is not None else out

    def infer_shape(self, x, *args) -> None:
        if self._flatten:
            n = 1
            for d in x.shape[1:]:
                n *= d
            self.weight.shape = (self.weight.shape[0], n)
        else:
            self.weight.shape = (self.weight.shape[0], x.shape[x.ndim - 1])

    def __repr__(self) -> str:
        shape = self.weight.shape
        return "{name}({layout}, {act})".format(
            name=self.__class__.__name__, act=self.act if self.act else "linear",
            layout=f"{shape[1] if shape[1] else None} -> {shape[0]}")


class Dropout(HybridBlock):
    """Dropout; the identity at inference (this runtime has no training mode)."""

    def __init__(self, rate: float, axes=(), **kwargs):
        super().__init__(**kwargs)
        self._rate = rate
        self._axes = axes

    def forward(self, x):
        if self._rate > 0:
            return invoke("Dropout", [x], {"p": self._rate, "axes": tuple(self._axes)})
        return invoke("_copy", [x])

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(p = {self._rate}, axes={self._axes})"


class Flatten(HybridBlock):
    """Flattens all but the first axis."""

    def forward(self, x):
        return invoke("Flatten", [x])

    def __repr__(self) -> str:
        return self.__class__.__name__


class Identity(HybridBlock):
    """Returns its input (generic Block repr, as in MXNet: `Identity(\n\n)`)."""

    def forward(self, x):
        return x


class Lambda(Block):
    """Wraps a function (or the name of an `np`/`npx` function) as a Block."""

    def __init__(self, function, prefix=None):
        super().__init__()
        if isinstance(function, str):
            for mod in (_np, _npx):
                if hasattr(mod, function):
                    self._func_impl = getattr(mod, function)
                    break
            else:
                raise Exception(f"Function name {function} is not found in np/npx.")
        elif callable(function):
            self._func_impl = function
        else:
            raise ValueError(f"Unrecognized function in lambda: {function} of type {type(function)}")

    def forward(self, *args):
        return self._func_impl(*args)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self._func_impl.__name__})"


class HybridLambda(HybridBlock):
    """Wraps a function (or the name of an `np`/`npx` function) as a HybridBlock."""

    def __init__(self, function, prefix=None):
        super().__init__()
        if isinstance(function, str):
            for mod in (_np, _npx):
                if hasattr(mod, function):
                    self._func = getattr(mod, function)
                    break
            else:
                raise Exception(f"Function name {function} is not found in np/npx.")
            self._func_name = function
        elif callable(function):
            self._func = function
            self._func_name = function.__name__
        else:
            raise ValueError(f"Unrecognized function in lambda: {function} of type {type(function)}")

    def forward(self, x, *args):
        return self._func(x, *args)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self._func_name})"
