"""Parametric and advanced activations: LeakyReLU, PReLU, ELU, SELU, GELU, Swish, SiLU.

All but Swish/SiLU map onto MXNet's `LeakyReLU` operator (act_type leaky/prelu/elu/selu/gelu),
so traced graphs match MXNet's exports op for op. Only LeakyReLU defines a repr; the others
print the generic Block repr (`PReLU(\\n\\n)`), as MXNet does.
"""
from __future__ import annotations

from ... import initializer
from ...dispatch import invoke
from ...frontend import op as _op
from ..hybrid_block import HybridBlock
from ..parameter import Parameter

__all__ = ["LeakyReLU", "PReLU", "ELU", "SELU", "GELU", "Swish", "SiLU"]


class LeakyReLU(HybridBlock):
    """`x if x > 0 else alpha * x`."""

    def __init__(self, alpha: float, **kwargs):
        assert alpha >= 0, "Slope coefficient for LeakyReLU must be no less than 0."
        super().__init__(**kwargs)
        self._alpha = alpha

    def forward(self, x):
        return invoke("LeakyReLU", [x], {"act_type": "leaky", "slope": self._alpha})

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self._alpha})"


class PReLU(HybridBlock):
    """Leaky ReLU with a learned slope `alpha`, one per channel when `in_channels` > 1."""

    def __init__(self, alpha_initializer=None, in_channels: int = 1, **kwargs):
        super().__init__(**kwargs)
        if alpha_initializer is None:
            alpha_initializer = initializer.Constant(0.25)
        self.alpha = Parameter("alpha", shape=(in_channels,), init=alpha_initializer)

    def forward(self, x):
        return invoke("LeakyReLU", [x, self.alpha.data()], {"act_type": "prelu"})


class ELU(HybridBlock):
    """`x if x > 0 else alpha * (exp(x) - 1)`."""

    def __init__(self, alpha: float = 1.0, **kwargs):
        super().__init__(**kwargs)
        self._alpha = alpha

    def forward(self, x):
        return invoke("LeakyReLU", [x], {"act_type": "elu", "slope": self._alpha})


class SELU(HybridBlock):
    """Scaled ELU with the self-normalising constants."""

    def forward(self, x):
        return invoke("LeakyReLU", [x], {"act_type": "selu"})


class GELU(HybridBlock):
    """Gaussian error linear unit; `approximation='tanh'` (MXNet master) uses the tanh form."""

    def __init__(self, approximation: str = "erf", **kwargs):
        super().__init__(**kwargs)
        if approximation not in ("erf", "tanh"):
            raise ValueError(f"Unsupported approximation! Support erf and tanh, got {approximation}")
        self._act_algorithm = "gelu" if approximation == "erf" else "gelu_tanh"

    def forward(self, x):
        return invoke("LeakyReLU", [x], {"act_type": self._act_algorithm})


class Swish(HybridBlock):
    """`x * sigmoid(beta * x)`."""

    def __init__(self, beta: float = 1.0, **kwargs):
        super().__init__(**kwargs)
        self._beta = beta

    def forward(self, x):
        return x * invoke(_op("npx.sigmoid"), [self._beta * x])


class SiLU(HybridBlock):
    """`x * sigmoid(x)` (Swish with beta = 1)."""

    def forward(self, x):
        return x * invoke(_op("npx.sigmoid"), [x])
