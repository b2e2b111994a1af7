"""ResNet V1 (He et al. 2015) and V2 (pre-activation, He et al. 2016), 18–152 layers.

Same blocks, attribute names and parameter shapes as MXNet's model zoo, so structural parameter
names (`features.4.0.body.0.weight`) and MXNet's pretrained files line up.
"""
from __future__ import annotations

from ....dispatch import invoke
from ... import nn
from ...hybrid_block import HybridBlock
from ..model_store import load_pretrained

__all__ = ["ResNetV1", "ResNetV2", "BasicBlockV1", "BasicBlockV2", "BottleneckV1",
           "BottleneckV2", "resnet18_v1", "resnet34_v1", "resnet50_v1", "resnet101_v1",
           "resnet152_v1", "resnet18_v2", "resnet34_v2", "resnet50_v2", "resnet101_v2",
           "resnet152_v2", "get_resnet"]


def _relu(x):
    return invoke("Activation", [x], {"act_type": "relu"})


def _conv3x3(channels: int, stride: int, in_channels: int) -> nn.Conv2D:
    return nn.Conv2D(channels, kernel_size=3, strides=stride, padding=1, use_bias=False,
                     in_channels=in_channels)


def _shortcut_v1(channels: int, stride: int, in_channels: int) -> nn.HybridSequential:
    down = nn.HybridSequential()
    down.add(nn.Conv2D(channels, kernel_size=1, strides=stride, use_bias=False,
                       in_channels=in_channels))
    down.add(nn.BatchNorm())
    return down


class _ResidualV1(HybridBlock):
    """Post-activation residual block: a conv+BN body, an identity (or 1x1 conv+BN) shortcut,
    relu after the sum."""
    _residual_first = False     # the sum's operand order, as MXNet's block writes it

    def __init__(self, channels: int, stride: int, downsample: bool = False,
                 in_channels: int = 0, **kwargs):
        super().__init__(**kwargs)
        self.body = nn.HybridSequential()
        self.body.add(*self._layers(channels, stride, in_channels))
        self.downsample = _shortcut_v1(channels, stride, in_channels) if downsample else None

    def _layers(self, channels: int, stride: int, in_channels: int) -> list:
        raise NotImplementedError

    def forward(self, x):
        out = self.body(x)                 # body before shortcut: MXNet's op/summary order
        residual = self.downsample(x) if self.downsample else x
        return _relu(residual + out) if self._residual_first else _relu(out + residual)


class BasicBlockV1(_ResidualV1):
    """Two 3x3 conv+BN, identity (or 1x1 conv+BN) shortcut, relu after the sum."""
    _residual_first = True

    def _layers(self, channels: int, stride: int, in_channels: int) -> list:
        return [_conv3x3(channels, stride, in_channels), nn.BatchNorm(), nn.Activation("relu"),
                _conv3x3(channels, 1, channels), nn.BatchNorm()]


class BottleneckV1(_ResidualV1):
    """1x1 reduce, 3x3, 1x1 expand (each conv+BN), shortcut, relu after the sum."""

    def _layers(self, channels: int, stride: int, in_channels: int) -> list:
        mid = channels // 4
        return [nn.Conv2D(mid, kernel_size=1, strides=stride), nn.BatchNorm(),
                nn.Activation("relu"), _conv3x3(mid, 1, mid), nn.BatchNorm(),
                nn.Activation("relu"), nn.Conv2D(channels, kernel_size=1, strides=1),
                nn.BatchNorm()]


def _shortcut_v2(channels: int, stride: int, in_channels: int) -> nn.Conv2D:
    return nn.Conv2D(channels, 1, stride, use_bias=False, in_channels=in_channels)


def _preact(block: HybridBlock, x) -> tuple:
    """A v2 block's entry: bn1-relu of x, and the shortcut (tapped after it when downsampling)."""
    act = _relu(block.bn1(x))
    return act, (block.downsample(act) if block.downsample else x)


class BasicBlockV2(HybridBlock):
    """Pre-activation basic block: BN-relu-conv twice; the shortcut taps the first activation."""

    def __init__(self, channels: int, stride: int, downsample: bool = False,
                 in_channels: int = 0, **kwargs):
        super().__init__(**kwargs)
        self.bn1 = nn.BatchNorm()
        self.conv1 = _conv3x3(channels, stride, in_channels)
        self.bn2 = nn.BatchNorm()
        self.conv2 = _conv3x3(channels, 1, channels)
        self.downsample = _shortcut_v2(channels, stride, in_channels) if downsample else None

    def forward(self, x):
        x, residual = _preact(self, x)
        x = self.conv2(_relu(self.bn2(self.conv1(x))))
        return x + residual


class BottleneckV2(HybridBlock):
    """Pre-activation bottleneck: (BN-relu-conv) x3 with 1x1, 3x3 (strided), 1x1 kernels."""

    def __init__(self, channels: int, stride: int, downsample: bool = False,
                 in_channels: int = 0, **kwargs):
        super().__init__(**kwargs)
        mid = channels // 4
        self.bn1 = nn.BatchNorm()
        self.conv1 = nn.Conv2D(mid, kernel_size=1, strides=1, use_bias=False)
        self.bn2 = nn.BatchNorm()
        self.conv2 = _conv3x3(mid, stride, mid)
        self.bn3 = nn.BatchNorm()
        self.conv3 = nn.Conv2D(channels, kernel_size=1, strides=1, use_bias=False)
        self.downsample = _shortcut_v2(channels, stride, in_channels) if downsample else None

    def forward(self, x):
        x, residual = _preact(self, x)
        x = self.conv1(x)
        x = self.conv2(_relu(self.bn2(x)))
        x = self.conv3(_relu(self.bn3(x)))
        return x + residual


def _stage(block, num: int, channels: int, stride: int, in_channels: int) -> nn.HybridSequential:
    stage = nn.HybridSequential()
    stage.add(block(channels, stride, channels != in_channels, in_channels=in_channels))
    for _ in range(num - 1):
        stage.add(block(channels, 1, False, in_channels=channels))
    return stage


def _stem(features: nn.HybridSequential, channels: int, thumbnail: bool) -> None:
    if thumbnail:                       # CIFAR-size inputs: one 3x3 conv, no pooling
        features.add(_conv3x3(channels, 1, 0))
        return
    features.add(nn.Conv2D(channels, 7, 2, 3, use_bias=False), nn.BatchNorm(),
                 nn.Activation("relu"), nn.MaxPool2D(3, 2, 1))


class ResNetV1(HybridBlock):
    """ResNet V1: stem, four stages, global average pool, Dense classifier."""

    def __init__(self, block, layers: list[int], channels: list[int], classes: int = 1000,
                 thumbnail: bool = False, **kwargs):
        super().__init__(**kwargs)
        assert len(layers) == len(channels) - 1
        self.features = nn.HybridSequential()
        _stem(self.features, channels[0], thumbnail)
        for i, num in enumerate(layers):
            self.features.add(_stage(block, num, channels[i + 1], 1 if i == 0 else 2,
                                     channels[i]))
        self.features.add(nn.GlobalAvgPool2D())
        self.output = nn.Dense(classes, in_units=channels[-1])

    def forward(self, x):
        return self.output(self.features(x))


class ResNetV2(HybridBlock):
    """ResNet V2: input BN (no affine), stem, pre-activation stages, BN-relu, pool, Dense."""

    def __init__(self, block, layers: list[int], channels: list[int], classes: int = 1000,
                 thumbnail: bool = False, **kwargs):
        super().__init__(**kwargs)
        assert len(layers) == len(channels) - 1
        self.features = nn.HybridSequential()
        self.features.add(nn.BatchNorm(scale=False, center=False))
        _stem(self.features, channels[0], thumbnail)
        in_channels = channels[0]
        for i, num in enumerate(layers):
            self.features.add(_stage(block, num, channels[i + 1], 1 if i == 0 else 2,
                                     in_channels))
            in_channels = channels[i + 1]
        self.features.add(nn.BatchNorm(), nn.Activation("relu"), nn.GlobalAvgPool2D(),
                          nn.Flatten())
        self.output = nn.Dense(classes, in_units=in_channels)

    def forward(self, x):
        return self.output(self.features(x))


resnet_spec = {18: ("basic_block", [2, 2, 2, 2], [64, 64, 128, 256, 512]),
               34: ("basic_block", [3, 4, 6, 3], [64, 64, 128, 256, 512]),
               50: ("bottle_neck", [3, 4, 6, 3], [64, 256, 512, 1024, 2048]),
               101: ("bottle_neck", [3, 4, 23, 3], [64, 256, 512, 1024, 2048]),
               152: ("bottle_neck", [3, 8, 36, 3], [64, 256, 512, 1024, 2048])}
_NETS = {1: ResNetV1, 2: ResNetV2}
_BLOCKS = {1: {"basic_block": BasicBlockV1, "bottle_neck": BottleneckV1},
           2: {"basic_block": BasicBlockV2, "bottle_neck": BottleneckV2}}


def get_resnet(version: int, num_layers: int, pretrained: bool = False, device=None,
               root: str | None = None, ctx=None, **kwargs) -> HybridBlock:
    """ResNet V1/V2 with 18, 34, 50, 101 or 152 layers."""
    assert num_layers in resnet_spec, \
        f"Invalid number of layers: {num_layers}. Options are {str(resnet_spec.keys())}"
    assert 1 <= version <= 2, f"Invalid resnet version: {version}. Options are 1 and 2."
    block_type, layers, channels = resnet_spec[num_layers]
    net = _NETS[version](_BLOCKS[version][block_type], layers, channels, **kwargs)
    return load_pretrained(net, f"resnet{num_layers}_v{version}", pretrained, root,
                           device if device is not None else ctx)


def _make(version: int, depth: int):
    def ctor(**kwargs) -> HybridBlock:
        return get_resnet(version, depth, **kwargs)
    ctor.__name__ = f"resnet{depth}_v{version}"
    ctor.__doc__ = f"ResNet-{depth} V{version} (`pretrained`, `classes`, `root`, `thumbnail`)."
    return ctor


resnet18_v1, resnet34_v1, resnet50_v1, resnet101_v1, resnet152_v1 = \
    (_make(1, d) for d in (18, 34, 50, 101, 152))
resnet18_v2, resnet34_v2, resnet50_v2, resnet101_v2, resnet152_v2 = \
    (_make(2, d) for d in (18, 34, 50, 101, 152))
