"""Inception v3 (Szegedy et al. 2015), 299x299 inputs."""
from __future__ import annotations

from ... import nn
from ...hybrid_block import HybridBlock
from ..model_store import load_pretrained

__all__ = ["Inception3", "inception_v3"]


def _basic_conv(**kwargs) -> nn.HybridSequential:
    """conv (no bias) + BN(eps 1e-3) + relu."""
    out = nn.HybridSequential()
    out.add(nn.Conv2D(use_bias=False, **kwargs), nn.BatchNorm(epsilon=0.001),
            nn.Activation("relu"))
    return out


_SETTING = ("channels", "kernel_size", "strides", "padding")


def _branch(pool: str | None, *convs) -> nn.HybridSequential:
    """Optional pool, then basic convs given as (channels, kernel, strides, padding) tuples."""
    out = nn.HybridSequential()
    if pool == "avg":
        out.add(nn.AvgPool2D(pool_size=3, strides=1, padding=1))
    elif pool == "max":
        out.add(nn.MaxPool2D(pool_size=3, strides=2))
    for setting in convs:
        out.add(_basic_conv(**{k: v for k, v in zip(_SETTING, setting) if v is not None}))
    return out


def _concat(*branches) -> nn.HybridConcatenate:
    out = nn.HybridConcatenate(axis=1)
    for b in branches:
        out.add(b)
    return out


def _make_A(pool_features: int):
    return _concat(_branch(None, (64, 1, None, None)),
                   _branch(None, (48, 1, None, None), (64, 5, None, 2)),
                   _branch(None, (64, 1, None, None), (96, 3, None, 1), (96, 3, None, 1)),
                   _branch("avg", (pool_features, 1, None, None)))


def _make_B():
    return _concat(_branch(None, (384, 3, 2, None)),
                   _branch(None, (64, 1, None, None), (96, 3, None, 1), (96, 3, 2, None)),
                   _branch("max"))


def _make_C(c7: int):
    return _concat(_branch(None, (192, 1, None, None)),
                   _branch(None, (c7, 1, None, None), (c7, (1, 7), None, (0, 3)),
                           (192, (7, 1), None, (3, 0))),
                   _branch(None, (c7, 1, None, None), (c7, (7, 1), None, (3, 0)),
                           (c7, (1, 7), None, (0, 3)), (c7, (7, 1), None, (3, 0)),
                           (192, (1, 7), None, (0, 3))),
                   _branch("avg", (192, 1, None, None)))


def _make_D():
    return _concat(_branch(None, (192, 1, None, None), (320, 3, 2, None)),
                   _branch(None, (192, 1, None, None), (192, (1, 7), None, (0, 3)),
                           (192, (7, 1), None, (3, 0)), (192, 3, 2, None)),
                   _branch("max"))


def _split_3x3(first):
    """`first` then a 1x3 / 3x1 pair whose outputs are concatenated."""
    seq = nn.HybridSequential()
    seq.add(first)
    seq.add(_concat(_branch(None, (384, (1, 3), None, (0, 1))),
                    _branch(None, (384, (3, 1), None, (1, 0)))))
    return seq


def _make_E():
    return _concat(_branch(None, (320, 1, None, None)),
                   _split_3x3(_branch(None, (384, 1, None, None))),
                   _split_3x3(_branch(None, (448, 1, None, None), (384, 3, None, 1))),
                   _branch("avg", (192, 1, None, None)))


def make_aux(classes: int) -> nn.HybridSequential:
    """Auxiliary classifier head (not used by Inception3's forward, kept for API parity)."""
    out = nn.HybridSequential()
    out.add(nn.AvgPool2D(pool_size=5, strides=3), _basic_conv(channels=128, kernel_size=1),
            _basic_conv(channels=768, kernel_size=5), nn.Flatten(), nn.Dense(classes))
    return out


class Inception3(HybridBlock):
    """Inception v3 feature extractor (A×3, B, C×4, D, E×2), 8x8 average pool, Dense."""

    def __init__(self, classes: int = 1000, **kwargs):
        super().__init__(**kwargs)
        f = self.features = nn.HybridSequential()
        f.add(_basic_conv(channels=32, kernel_size=3, strides=2),
              _basic_conv(channels=32, kernel_size=3),
              _basic_conv(channels=64, kernel_size=3, padding=1),
              nn.MaxPool2D(pool_size=3, strides=2),
              _basic_conv(channels=80, kernel_size=1),
              _basic_conv(channels=192, kernel_size=3),
              nn.MaxPool2D(pool_size=3, strides=2))
        f.add(_make_A(32), _make_A(64), _make_A(64), _make_B())
        f.add(_make_C(128), _make_C(160), _make_C(160), _make_C(192), _make_D())
        f.add(_make_E(), _make_E(), nn.AvgPool2D(pool_size=8), nn.Dropout(0.5))
        self.output = nn.Dense(classes)

    def forward(self, x):
        return self.output(self.features(x))


def inception_v3(pretrained: bool = False, device=None, root: str | None = None, ctx=None,
                 **kwargs) -> HybridBlock:
    """Inception v3 (`pretrained` loads `<root>/inceptionv3-*.params`)."""
    return load_pretrained(Inception3(**kwargs), "inceptionv3", pretrained, root,
                           device if device is not None else ctx)
