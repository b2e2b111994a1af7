"""Activation layers."""
from __future__ import annotations

from ...dispatch import invoke
from ..hybrid_block import HybridBlock


class Activation(HybridBlock):
    """`Activation(act_type)`: relu, sigmoid, tanh, softrelu, softsign, log_sigmoid, mish."""

    def __init__(self, activation: str, **kwargs):
        self._act_type = activation
        super().__init__(**kwargs)

    def _alias(self) -> str:
        return self._act_type

    def forward(self, x):
        return invoke("Activation", [x], {"act_type": self._act_type})

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self._act_type})"
