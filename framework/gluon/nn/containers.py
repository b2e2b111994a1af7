"""Branching containers: run every child on the same input and concatenate the results.

`HybridConcatenate`/`Concatenate` are Gluon 2.0's names; `HybridConcurrent`/`Concurrent` are the
1.x `gluon.contrib.nn` names that the model zoo (DenseNet, Inception, SqueezeNet) was written with.
"""
from __future__ import annotations

from ...dispatch import invoke
from .basic_layers import HybridSequential, Identity, Sequential

__all__ = ["HybridConcatenate", "Concatenate", "HybridConcurrent", "Concurrent", "Identity"]


def _concat(outs: list, axis: int):
    return invoke("Concat", outs, {"dim": axis, "num_args": len(outs)})


class Concatenate(Sequential):
    """Feeds the input to every child Block and concatenates the outputs along `axis`."""

    def __init__(self, axis: int = -1):
        super().__init__()
        self.axis = axis

    def forward(self, x):
        return _concat([block(x) for _, block in self._child_items()], self.axis)


class HybridConcatenate(HybridSequential):
    """Feeds the input to every child HybridBlock and concatenates the outputs along `axis`."""

    def __init__(self, axis: int = -1):
        super().__init__()
        self.axis = axis

    def forward(self, x):
        return _concat([block(x) for _, block in self._child_items()], self.axis)


HybridConcurrent = HybridConcatenate
Concurrent = Concatenate
