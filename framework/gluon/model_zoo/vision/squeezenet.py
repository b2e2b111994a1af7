"""SqueezeNet 1.0 and 1.1 (Iandola et al. 2016)."""
from __future__ import annotations

from ... import nn
from ...hybrid_block import HybridBlock
from ..model_store import load_pretrained

__all__ = ["SqueezeNet", "squeezenet1_0", "squeezenet1_1", "get_squeezenet"]


def _conv_relu(channels: int, kernel_size: int, padding: int = 0) -> nn.HybridSequential:
    out = nn.HybridSequential()
    out.add(nn.Conv2D(channels, kernel_size, padding=padding), nn.Activation("relu"))
    return out


def _fire(squeeze: int, expand1x1: int, expand3x3: int) -> nn.HybridSequential:
    """Fire module: 1x1 squeeze, then 1x1 and 3x3 expands concatenated on channels."""
    out = nn.HybridSequential()
    out.add(_conv_relu(squeeze, 1))
    paths = nn.HybridConcatenate(axis=1)
    paths.add(_conv_relu(expand1x1, 1))
    paths.add(_conv_relu(expand3x3, 3, 1))
    out.add(paths)
    return out


def _pool() -> nn.MaxPool2D:
    return nn.MaxPool2D(pool_size=3, strides=2, ceil_mode=True)


class SqueezeNet(HybridBlock):
    """Fire modules between ceil-mode max pools; conv classifier with global average pool."""

    def __init__(self, version: str, classes: int = 1000, **kwargs):
        super().__init__(**kwargs)
        assert version in ["1.0", "1.1"], \
            f"Unsupported SqueezeNet version {version}:1.0 or 1.1 expected"
        f = self.features = nn.HybridSequential()
        if version == "1.0":
            f.add(nn.Conv2D(96, kernel_size=7, strides=2), nn.Activation("relu"), _pool())
            f.add(_fire(16, 64, 64), _fire(16, 64, 64), _fire(32, 128, 128), _pool())
            f.add(_fire(32, 128, 128), _fire(48, 192, 192), _fire(48, 192, 192),
                  _fire(64, 256, 256), _pool(), _fire(64, 256, 256))
        else:
            f.add(nn.Conv2D(64, kernel_size=3, strides=2), nn.Activation("relu"), _pool())
            f.add(_fire(16, 64, 64), _fire(16, 64, 64), _pool())
            f.add(_fire(32, 128, 128), _fire(32, 128, 128), _pool())
            f.add(_fire(48, 192, 192), _fire(48, 192, 192), _fire(64, 256, 256),
                  _fire(64, 256, 256))
        f.add(nn.Dropout(0.5))
        self.output = nn.HybridSequential()
        self.output.add(nn.Conv2D(classes, kernel_size=1), nn.Activation("relu"),
                        nn.AvgPool2D(13), nn.Flatten())

    def forward(self, x):
        return self.output(self.features(x))


def get_squeezenet(version: str, pretrained: bool = False, device=None, root: str | None = None,
                   ctx=None, **kwargs) -> HybridBlock:
    """SqueezeNet '1.0' or '1.1'."""
    return load_pretrained(SqueezeNet(version, **kwargs), f"squeezenet{version}", pretrained,
                           root, device if device is not None else ctx)


def squeezenet1_0(**kwargs) -> HybridBlock:
    """SqueezeNet 1.0."""
    return get_squeezenet("1.0", **kwargs)


def squeezenet1_1(**kwargs) -> HybridBlock:
    """SqueezeNet 1.1 (2.4x less computation than 1.0)."""
    return get_squeezenet("1.1", **kwargs)
