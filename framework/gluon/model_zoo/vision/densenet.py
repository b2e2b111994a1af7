"""DenseNet 121/161/169/201 (Huang et al. 2016)."""
from __future__ import annotations

from ... import nn
from ...hybrid_block import HybridBlock
from ..model_store import load_pretrained

__all__ = ["DenseNet", "densenet121", "densenet161", "densenet169", "densenet201"]


def _dense_layer(growth_rate: int, bn_size: int, dropout: float) -> nn.HybridConcatenate:
    """BN-relu-1x1conv-BN-relu-3x3conv, concatenated onto its own input."""
    new = nn.HybridSequential()
    new.add(nn.BatchNorm(), nn.Activation("relu"),
            nn.Conv2D(bn_size * growth_rate, kernel_size=1, use_bias=False),
            nn.BatchNorm(), nn.Activation("relu"),
            nn.Conv2D(growth_rate, kernel_size=3, padding=1, use_bias=False))
    if dropout:
        new.add(nn.Dropout(dropout))
    out = nn.HybridConcatenate(axis=1)
    out.add(nn.Identity())
    out.add(new)
    return out


def _dense_block(num_layers: int, bn_size: int, growth_rate: int,
                 dropout: float) -> nn.HybridSequential:
    block = nn.HybridSequential()
    for _ in range(num_layers):
        block.add(_dense_layer(growth_rate, bn_size, dropout))
    return block


def _transition(channels: int) -> nn.HybridSequential:
    out = nn.HybridSequential()
    out.add(nn.BatchNorm(), nn.Activation("relu"),
            nn.Conv2D(channels, kernel_size=1, use_bias=False),
            nn.AvgPool2D(pool_size=2, strides=2))
    return out


class DenseNet(HybridBlock):
    """Stem, dense blocks joined by transitions that halve the channels, BN-relu, pool, Dense."""

    def __init__(self, num_init_features: int, growth_rate: int, block_config: list[int],
                 bn_size: int = 4, dropout: float = 0, classes: int = 1000, **kwargs):
        super().__init__(**kwargs)
        f = self.features = nn.HybridSequential()
        f.add(nn.Conv2D(num_init_features, kernel_size=7, strides=2, padding=3, use_bias=False),
              nn.BatchNorm(), nn.Activation("relu"),
              nn.MaxPool2D(pool_size=3, strides=2, padding=1))
        channels = num_init_features
        for i, num in enumerate(block_config):
            f.add(_dense_block(num, bn_size, growth_rate, dropout))
            channels += num * growth_rate
            if i != len(block_config) - 1:
                channels //= 2
                f.add(_transition(channels))
        f.add(nn.BatchNorm(), nn.Activation("relu"), nn.AvgPool2D(pool_size=7), nn.Flatten())
        self.output = nn.Dense(classes)

    def forward(self, x):
        return self.output(self.features(x))


densenet_spec = {121: (64, 32, [6, 12, 24, 16]), 161: (96, 48, [6, 12, 36, 24]),
                 169: (64, 32, [6, 12, 32, 32]), 201: (64, 32, [6, 12, 48, 32])}


def get_densenet(num_layers: int, pretrained: bool = False, device=None,
                 root: str | None = None, ctx=None, **kwargs) -> HybridBlock:
    """DenseNet with 121, 161, 169 or 201 layers."""
    init_features, growth, config = densenet_spec[num_layers]
    net = DenseNet(init_features, growth, config, **kwargs)
    return load_pretrained(net, f"densenet{num_layers}", pretrained, root,
                           device if device is not None else ctx)


def _make(depth: int):
    def ctor(**kwargs) -> HybridBlock:
        return get_densenet(depth, **kwargs)
    ctor.__name__ = f"densenet{depth}"
    ctor.__doc__ = f"DenseNet-{depth}."
    return ctor


densenet121, densenet161, densenet169, densenet201 = (_make(d) for d in (121, 161, 169, 201))
