"""VGG 11/13/16/19 (Simonyan & Zisserman 2014), with or without BatchNorm."""
from __future__ import annotations

from .... import initializer
from ... import nn
from ...hybrid_block import HybridBlock
from ..model_store import load_pretrained

__all__ = ["VGG", "vgg11", "vgg13", "vgg16", "vgg19", "vgg11_bn", "vgg13_bn", "vgg16_bn",
           "vgg19_bn", "get_vgg"]


class VGG(HybridBlock):
    """Stacks of 3x3 conv(+BN)+relu separated by 2x2 max pools, then three Dense layers."""

    def __init__(self, layers: list[int], filters: list[int], classes: int = 1000,
                 batch_norm: bool = False, **kwargs):
        super().__init__(**kwargs)
        assert len(layers) == len(filters)
        self.features = self._make_features(layers, filters, batch_norm)
        for _ in range(2):
            self.features.add(nn.Dense(4096, activation="relu", weight_initializer="normal",
                                       bias_initializer="zeros"))
            self.features.add(nn.Dropout(rate=0.5))
        self.output = nn.Dense(classes, weight_initializer="normal", bias_initializer="zeros")

    @staticmethod
    def _make_features(layers, filters, batch_norm) -> nn.HybridSequential:
        feats = nn.HybridSequential()
        for num, width in zip(layers, filters):
            for _ in range(num):
                feats.add(nn.Conv2D(width, kernel_size=3, padding=1,
                                    weight_initializer=initializer.Xavier(
                                        rnd_type="gaussian", factor_type="out", magnitude=2),
                                    bias_initializer="zeros"))
                if batch_norm:
                    feats.add(nn.BatchNorm())
                feats.add(nn.Activation("relu"))
            feats.add(nn.MaxPool2D(strides=2))
        return feats

    def forward(self, x):
        return self.output(self.features(x))


vgg_spec = {11: ([1, 1, 2, 2, 2], [64, 128, 256, 512, 512]),
            13: ([2, 2, 2, 2, 2], [64, 128, 256, 512, 512]),
            16: ([2, 2, 3, 3, 3], [64, 128, 256, 512, 512]),
            19: ([2, 2, 4, 4, 4], [64, 128, 256, 512, 512])}


def get_vgg(num_layers: int, pretrained: bool = False, device=None, root: str | None = None,
            ctx=None, **kwargs) -> HybridBlock:
    """VGG with 11, 13, 16 or 19 layers (`batch_norm=True` for the _bn variants)."""
    layers, filters = vgg_spec[num_layers]
    net = VGG(layers, filters, **kwargs)
    suffix = "_bn" if kwargs.get("batch_norm") else ""
    return load_pretrained(net, f"vgg{num_layers}{suffix}", pretrained, root,
                           device if device is not None else ctx)


def _make(depth: int, bn: bool):
    def ctor(**kwargs) -> HybridBlock:
        if bn:
            kwargs["batch_norm"] = True
        return get_vgg(depth, **kwargs)
    ctor.__name__ = f"vgg{depth}{'_bn' if bn else ''}"
    ctor.__doc__ = f"VGG-{depth}{' with BatchNorm' if bn else ''}."
    return ctor


vgg11, vgg13, vgg16, vgg19 = (_make(d, False) for d in (11, 13, 16, 19))
vgg11_bn, vgg13_bn, vgg16_bn, vgg19_bn = (_make(d, True) for d in (11, 13, 16, 19))
