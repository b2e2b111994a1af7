"""Deformable convolution layers (MXNet 2.0's `nn.DeformableConvolution` and
`nn.ModulatedDeformableConvolution`): a plain convolution of the input predicts the sampling
offsets (and, for v2, the masks: `2·sigmoid(·)`), which the deformable operator then uses.
2-D, NCHW; offsets start at zero, so a fresh layer computes an ordinary convolution."""
from __future__ import annotations

from ... import numpy_extension as npx
from ..hybrid_block import HybridBlock
from ..parameter import Parameter
from .activations import Activation
from .conv_layers import _tuple

__all__ = ["DeformableConvolution", "ModulatedDeformableConvolution"]


class DeformableConvolution(HybridBlock):
    """DCN v1: `channels` filters of `kernel_size` whose taps move by learned offsets."""

    _modulated = False

    def __init__(self, channels, kernel_size=(1, 1), strides=(1, 1), padding=(0, 0),
                 dilation=(1, 1), groups=1, num_deformable_group=1, layout="NCHW",
                 use_bias=True, in_channels=0, activation=None, weight_initializer=None,
                 bias_initializer="zeros", offset_weight_initializer="zeros",
                 offset_bias_initializer="zeros", offset_use_bias=True, op_name=None, adj=None):
        super().__init__()
        if layout != "NCHW":
            raise ValueError(f"{type(self).__name__}: only the NCHW layout is supported, got "
                             f"{layout!r}")
        k = _tuple(kernel_size, 2, "kernel_size")
        geometry = {"kernel": k, "stride": _tuple(strides, 2, "strides"),
                    "dilate": _tuple(dilation, 2, "dilation"), "pad": _tuple(padding, 2, "padding"),
                    "num_group": groups}
        self._split = num_deformable_group * 2 * k[0] * k[1]   # offset channels; masks follow
        n_offset = self._split + (self._split // 2 if self._modulated else 0)
        self._offset_kwargs = {**geometry, "num_filter": n_offset, "no_bias": not offset_use_bias}
        self._kwargs = {**geometry, "num_filter": channels, "no_bias": not use_bias,
                        "num_deformable_group": num_deformable_group}
        cin = in_channels // groups if in_channels else -1
        self.deformable_conv_weight = Parameter("deformable_conv_weight", init=weight_initializer,
                                                shape=(channels, cin) + k, allow_deferred_init=True)
        self.deformable_conv_bias = Parameter("deformable_conv_bias", shape=(channels,),
                                              init=bias_initializer, allow_deferred_init=True) \
            if use_bias else None
        self.offset_weight = Parameter("offset_weight", shape=(n_offset, cin) + k,
                                       init=offset_weight_initializer, allow_deferred_init=True)
        self.offset_bias = Parameter("offset_bias", shape=(n_offset,),
                                     init=offset_bias_initializer, allow_deferred_init=True) \
            if offset_use_bias else None
        self.act = Activation(activation) if activation is not None else None

    def _offsets(self, x):
        ins = [x, self.offset_weight.data()] + \
            ([self.offset_bias.data()] if self.offset_bias is not None else [])
        return npx.convolution(*ins, **self._offset_kwargs)

    def _apply(self, x, offset):
        ins = [x, offset, self.deformable_conv_weight.data()] + \
            ([self.deformable_conv_bias.data()] if self.deformable_conv_bias is not None else [])
        return npx.deformable_convolution(*ins, **self._kwargs)

    def forward(self, x):
        out = self._apply(x, self._offsets(x))
        return self.act(out) if self.act is not None else out

    def infer_shape(self, x, *args) -> None:
        cin = x.shape[1] // self._kwargs["num_group"]
        for p in (self.deformable_conv_weight, self.offset_weight):
            p.shape = (p.shape[0], cin) + tuple(p.shape[2:])


class ModulatedDeformableConvolution(DeformableConvolution):
    """DCN v2: DCN v1 whose samples are also scaled by learned masks (2·sigmoid of the offset
    convolution's last channels)."""

    _modulated = True

    def _apply(self, x, offset):
        off = npx.slice_axis(offset, axis=1, begin=0, end=self._split)
        mask = npx.sigmoid(npx.slice_axis(offset, axis=1, begin=self._split, end=None)) * 2
        ins = [x, off, mask, self.deformable_conv_weight.data()] + \
            ([self.deformable_conv_bias.data()] if self.deformable_conv_bias is not None else [])
        return npx.modulated_deformable_convolution(*ins, **self._kwargs)
