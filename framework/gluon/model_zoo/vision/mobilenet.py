"""MobileNet v1 (Howard et al. 2017) and v2 (Sandler et al. 2018) at widths 1.0/0.75/0.5/0.25."""
from __future__ import annotations

from ....dispatch import invoke
from ... import nn
from ...hybrid_block import HybridBlock
from ..model_store import load_pretrained

__all__ = ["MobileNet", "MobileNetV2", "RELU6", "LinearBottleneck", "mobilenet1_0",
           "mobilenet_v2_1_0", "mobilenet0_75", "mobilenet_v2_0_75", "mobilenet0_5",
           "mobilenet_v2_0_5", "mobilenet0_25", "mobilenet_v2_0_25", "get_mobilenet",
           "get_mobilenet_v2"]


class RELU6(HybridBlock):
    """`clip(x, 0, 6)`."""

    def forward(self, x):
        return invoke("clip", [x], {"a_min": 0.0, "a_max": 6.0})


def _add_conv(out, channels: int = 1, kernel: int = 1, stride: int = 1, pad: int = 0,
              num_group: int = 1, active: bool = True, relu6: bool = False) -> None:
    out.add(nn.Conv2D(channels, kernel, stride, pad, groups=num_group, use_bias=False))
    out.add(nn.BatchNorm(scale=True))
    if active:
        out.add(RELU6() if relu6 else nn.Activation("relu"))


def _add_conv_dw(out, dw_channels: int, channels: int, stride: int, relu6: bool = False) -> None:
    """Depthwise 3x3 (groups = channels) then pointwise 1x1."""
    _add_conv(out, channels=dw_channels, kernel=3, stride=stride, pad=1, num_group=dw_channels,
              relu6=relu6)
    _add_conv(out, channels=channels, relu6=relu6)


class LinearBottleneck(HybridBlock):
    """Inverted residual: 1x1 expand (x t), 3x3 depthwise, 1x1 linear projection."""

    def __init__(self, in_channels: int, channels: int, t: int, stride: int, **kwargs):
        super().__init__(**kwargs)
        self.use_shortcut = stride == 1 and in_channels == channels
        self.out = nn.HybridSequential()
        _add_conv(self.out, in_channels * t, relu6=True)
        _add_conv(self.out, in_channels * t, kernel=3, stride=stride, pad=1,
                  num_group=in_channels * t, relu6=True)
        _add_conv(self.out, channels, active=False, relu6=True)

    def forward(self, x):
        out = self.out(x)
        return out + x if self.use_shortcut else out


class MobileNet(HybridBlock):
    """MobileNet v1: a strided conv then 13 depthwise-separable blocks, pool, Dense."""

    def __init__(self, multiplier: float = 1.0, classes: int = 1000, **kwargs):
        super().__init__(**kwargs)
        self.features = nn.HybridSequential()
        _add_conv(self.features, channels=int(32 * multiplier), kernel=3, pad=1, stride=2)
        dw = [int(c * multiplier) for c in [32, 64] + [128] * 2 + [256] * 2 + [512] * 6 + [1024]]
        pw = [int(c * multiplier) for c in [64] + [128] * 2 + [256] * 2 + [512] * 6 + [1024] * 2]
        strides = [1, 2] * 3 + [1] * 5 + [2, 1]
        for d, c, s in zip(dw, pw, strides):
            _add_conv_dw(self.features, dw_channels=d, channels=c, stride=s)
        self.features.add(nn.GlobalAvgPool2D(), nn.Flatten())
        self.output = nn.Dense(classes)

    def forward(self, x):
        return self.output(self.features(x))


class MobileNetV2(HybridBlock):
    """MobileNet v2: 17 linear bottlenecks, 1x1 conv to 1280, pool, 1x1 conv classifier."""

    def __init__(self, multiplier: float = 1.0, classes: int = 1000, **kwargs):
        super().__init__(**kwargs)
        self.features = nn.HybridSequential()
        _add_conv(self.features, int(32 * multiplier), kernel=3, stride=2, pad=1, relu6=True)
        ins = [int(c * multiplier) for c in
               [32] + [16] + [24] * 2 + [32] * 3 + [64] * 4 + [96] * 3 + [160] * 3]
        outs = [int(c * multiplier) for c in
                [16] + [24] * 2 + [32] * 3 + [64] * 4 + [96] * 3 + [160] * 3 + [320]]
        ts = [1] + [6] * 16
        strides = [1, 2] * 2 + [1, 1, 2] + [1] * 6 + [2] + [1] * 3
        for i, c, t, s in zip(ins, outs, ts, strides):
            self.features.add(LinearBottleneck(in_channels=i, channels=c, t=t, stride=s))
        last = int(1280 * multiplier) if multiplier > 1.0 else 1280
        _add_conv(self.features, last, relu6=True)
        self.features.add(nn.GlobalAvgPool2D())
        self.output = nn.HybridSequential()
        self.output.add(nn.Conv2D(classes, 1, use_bias=False), nn.Flatten())

    def forward(self, x):
        return self.output(self.features(x))


def _suffix(multiplier: float) -> str:
    s = f"{multiplier:.2f}"
    return s[:-1] if s in ("1.00", "0.50") else s


def get_mobilenet(multiplier: float, pretrained: bool = False, device=None,
                  root: str | None = None, ctx=None, **kwargs) -> HybridBlock:
    """MobileNet v1 with width multiplier `multiplier`."""
    return load_pretrained(MobileNet(multiplier, **kwargs), f"mobilenet{_suffix(multiplier)}",
                           pretrained, root, device if device is not None else ctx)


def get_mobilenet_v2(multiplier: float, pretrained: bool = False, device=None,
                     root: str | None = None, ctx=None, **kwargs) -> HybridBlock:
    """MobileNet v2 with width multiplier `multiplier`."""
    return load_pretrained(MobileNetV2(multiplier, **kwargs),
                           f"mobilenetv2_{_suffix(multiplier)}", pretrained, root,
                           device if device is not None else ctx)


def _make(v2: bool, multiplier: float, name: str):
    getter = get_mobilenet_v2 if v2 else get_mobilenet

    def ctor(**kwargs) -> HybridBlock:
        return getter(multiplier, **kwargs)
    ctor.__name__ = name
    ctor.__doc__ = f"MobileNet{'V2' if v2 else ''} with width multiplier {multiplier}."
    return ctor


mobilenet1_0 = _make(False, 1.0, "mobilenet1_0")
mobilenet0_75 = _make(False, 0.75, "mobilenet0_75")
mobilenet0_5 = _make(False, 0.5, "mobilenet0_5")
mobilenet0_25 = _make(False, 0.25, "mobilenet0_25")
mobilenet_v2_1_0 = _make(True, 1.0, "mobilenet_v2_1_0")
mobilenet_v2_0_75 = _make(True, 0.75, "mobilenet_v2_0_75")
mobilenet_v2_0_5 = _make(True, 0.5, "mobilenet_v2_0_5")
mobilenet_v2_0_25 = _make(True, 0.25, "mobilenet_v2_0_25")
