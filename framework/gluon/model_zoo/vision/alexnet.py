"""AlexNet ("One weird trick", Krizhevsky 2014 variant used by MXNet's model zoo)."""
from __future__ import annotations

from ... import nn
from ...hybrid_block import HybridBlock
from ..model_store import load_pretrained

__all__ = ["AlexNet", "alexnet"]


class AlexNet(HybridBlock):
    """Five convolutions (relu), three max pools, two Dense-4096 with dropout, classifier."""

    def __init__(self, classes: int = 1000, **kwargs):
        super().__init__(**kwargs)
        f = self.features = nn.HybridSequential()
        f.add(nn.Conv2D(64, kernel_size=11, strides=4, padding=2, activation="relu"))
        f.add(nn.MaxPool2D(pool_size=3, strides=2))
        f.add(nn.Conv2D(192, kernel_size=5, padding=2, activation="relu"))
        f.add(nn.MaxPool2D(pool_size=3, strides=2))
        for width in (384, 256, 256):
            f.add(nn.Conv2D(width, kernel_size=3, padding=1, activation="relu"))
        f.add(nn.MaxPool2D(pool_size=3, strides=2))
        f.add(nn.Flatten())
        for _ in range(2):
            f.add(nn.Dense(4096, activation="relu"))
            f.add(nn.Dropout(0.5))
        self.output = nn.Dense(classes)

    def forward(self, x):
        return self.output(self.features(x))


def alexnet(pretrained: bool = False, device=None, root: str | None = None, ctx=None,
            **kwargs) -> HybridBlock:
    """AlexNet (`pretrained` loads `<root>/alexnet-*.params`)."""
    return load_pretrained(AlexNet(**kwargs), "alexnet", pretrained, root,
                           device if device is not None else ctx)
