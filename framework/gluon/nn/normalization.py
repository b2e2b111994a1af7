"""Normalisation layers: BatchNorm (+ SyncBatchNorm, BatchNormReLU), LayerNorm, InstanceNorm, GroupNorm.

Parameter names, order, deferred shapes and reprs follow Gluon 2.0 so that structural names
(`features.1.gamma`, `bn.running_var`) and summaries match MXNet exports.
"""
from __future__ import annotations

import uuid
import warnings

import numpy as _onp

from ...dispatch import invoke
from ..hybrid_block import HybridBlock
from ..parameter import Parameter

__all__ = ["BatchNorm", "SyncBatchNorm", "BatchNormReLU", "LayerNorm", "InstanceNorm", "GroupNorm"]


def _kwargs_repr(name: str, kwargs: dict, in_channels) -> str:
    content = ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
    return f"{name}({content}, in_channels={in_channels})"


class _BatchNorm(HybridBlock):
    """Shared body of BatchNorm / BatchNormReLU; inference uses the running statistics."""

    def __init__(self, axis: int = 1, momentum: float = 0.9, epsilon: float = 1e-5,
                 center: bool = True, scale: bool = True, use_global_stats: bool = False,
                 fuse_relu: bool = False, beta_initializer="zeros", gamma_initializer="ones",
                 running_mean_initializer="zeros", running_variance_initializer="ones",
                 in_channels: int = 0, **kwargs):
        super().__init__(**kwargs)
        self._kwargs = {"axis": axis, "eps": epsilon, "momentum": momentum,
                        "fix_gamma": not scale, "use_global_stats": use_global_stats}
        self.fuse_relu = fuse_relu
        self._axis = axis
        if in_channels != 0:
            self.in_channels = in_channels
        self.gamma = Parameter("gamma", grad_req="write" if scale else "null", shape=(in_channels,),
                               init=gamma_initializer, allow_deferred_init=True,
                               differentiable=scale)
        self.beta = Parameter("beta", grad_req="write" if center else "null", shape=(in_channels,),
                              init=beta_initializer, allow_deferred_init=True,
                              differentiable=center)
        self.running_mean = Parameter("running_mean", grad_req="null", shape=(in_channels,),
                                      init=running_mean_initializer, allow_deferred_init=True,
                                      differentiable=False)
        self.running_var = Parameter("running_var", grad_req="null", shape=(in_channels,),
                                     init=running_variance_initializer, allow_deferred_init=True,
                                     differentiable=False)

    def cast(self, dtype) -> None:
        # MXNet keeps BatchNorm statistics in float32 when the network goes to float16
        if _onp.dtype(dtype) == _onp.float16:
            dtype = "float32"
        super().cast(dtype)

    def _op_attrs(self) -> dict:
        return dict(self._kwargs)

    def forward(self, x):
        out = invoke("BatchNorm", [x, self.gamma.data(), self.beta.data(),
                                   self.running_mean.data(), self.running_var.data()],
                     self._op_attrs())
        if self.fuse_relu:
            # no fused kernel needed: BatchNorm then relu is numerically identical at inference
            out = invoke("Activation", [out], {"act_type": "relu"})
        return out

    def infer_shape(self, x, *args) -> None:
        axis = self._axis if self._axis >= 0 else self._axis + x.ndim
        c = x.shape[axis]
        for p in (self.gamma, self.beta, self.running_mean, self.running_var):
            p.shape = (c,)

    def __repr__(self) -> str:
        c = self.gamma.shape[0]
        return _kwargs_repr(self.__class__.__name__, self._kwargs, c if c else None)


class BatchNorm(_BatchNorm):
    """Batch normalisation over `axis` (channels); inference mode uses running_mean/running_var."""

    def __init__(self, axis: int = 1, momentum: float = 0.9, epsilon: float = 1e-5,
                 center: bool = True, scale: bool = True, use_global_stats: bool = False,
                 beta_initializer="zeros", gamma_initializer="ones",
                 running_mean_initializer="zeros", running_variance_initializer="ones",
                 in_channels: int = 0, **kwargs):
        super().__init__(axis, momentum, epsilon, center, scale, use_global_stats, False,
                         beta_initializer, gamma_initializer, running_mean_initializer,
                         running_variance_initializer, in_channels, **kwargs)


class BatchNormReLU(_BatchNorm):
    """BatchNorm followed by relu (MXNet's fused `batch_norm_with_relu`)."""

    def __init__(self, axis: int = 1, momentum: float = 0.9, epsilon: float = 1e-5,
                 center: bool = True, scale: bool = True, use_global_stats: bool = False,
                 beta_initializer="zeros", gamma_initializer="ones",
                 running_mean_initializer="zeros", running_variance_initializer="ones",
                 in_channels: int = 0, **kwargs):
        super().__init__(axis, momentum, epsilon, center, scale, use_global_stats, True,
                         beta_initializer, gamma_initializer, running_mean_initializer,
                         running_variance_initializer, in_channels, **kwargs)


class SyncBatchNorm(BatchNorm):
    """Cross-device BatchNorm; with one device and at inference it is exactly BatchNorm."""

    def __init__(self, in_channels: int = 0, num_devices: int | None = None,
                 momentum: float = 0.9, epsilon: float = 1e-5, center: bool = True,
                 scale: bool = True, use_global_stats: bool = False, beta_initializer="zeros",
                 gamma_initializer="ones", running_mean_initializer="zeros",
                 running_variance_initializer="ones", **kwargs):
        super().__init__(1, momentum, epsilon, center, scale, use_global_stats, beta_initializer,
                         gamma_initializer, running_mean_initializer,
                         running_variance_initializer, in_channels, **kwargs)
        if num_devices is None:
            warnings.warn("Caution using SyncBatchNorm: if not using all the GPUs, please "
                          "mannually set num_devices", UserWarning, stacklevel=2)
            num_devices = 1
        self._kwargs = {"eps": epsilon, "momentum": momentum, "fix_gamma": not scale,
                        "use_global_stats": use_global_stats, "ndev": num_devices,
                        "key": uuid.uuid4()}

    def _op_attrs(self) -> dict:
        # the BatchNorm op has no ndev/key attributes; they only matter for multi-GPU training
        return {"axis": 1, "eps": self._kwargs["eps"], "momentum": self._kwargs["momentum"],
                "fix_gamma": self._kwargs["fix_gamma"],
                "use_global_stats": self._kwargs["use_global_stats"]}


class _GammaBeta(HybridBlock):
    """Layers with per-channel gamma and beta (LayerNorm, InstanceNorm, GroupNorm)."""

    def __init__(self, center: bool, scale: bool, beta_initializer, gamma_initializer,
                 in_channels: int):
        super().__init__()
        self.gamma = Parameter("gamma", grad_req="write" if scale else "null",
                               shape=(in_channels,), init=gamma_initializer,
                               allow_deferred_init=True)
        self.beta = Parameter("beta", grad_req="write" if center else "null",
                              shape=(in_channels,), init=beta_initializer,
                              allow_deferred_init=True)

    def _set_channels(self, c: int) -> None:
        self.gamma.shape = (c,)
        self.beta.shape = (c,)

    def __repr__(self) -> str:
        return _kwargs_repr(self.__class__.__name__, self._kwargs, self.gamma.shape[0])


class LayerNorm(_GammaBeta):
    """Layer normalisation over `axis` (default: the last)."""

    def __init__(self, axis: int = -1, epsilon: float = 1e-5, center: bool = True,
                 scale: bool = True, beta_initializer="zeros", gamma_initializer="ones",
                 in_channels: int = 0):
        super().__init__(center, scale, beta_initializer, gamma_initializer, in_channels)
        self._kwargs = {"eps": epsilon, "axis": axis, "center": center, "scale": scale}
        self._axis = axis
        self._epsilon = epsilon

    def forward(self, data):
        return invoke("LayerNorm", [data, self.gamma.data(), self.beta.data()],
                      {"axis": self._axis, "eps": self._epsilon})

    def infer_shape(self, data, *args) -> None:
        axis = self._axis if self._axis >= 0 else self._axis + data.ndim
        self._set_channels(data.shape[axis])


class InstanceNorm(_GammaBeta):
    """Instance normalisation: each (sample, channel) over its spatial positions."""

    def __init__(self, axis: int = 1, epsilon: float = 1e-5, center: bool = True,
                 scale: bool = False, beta_initializer="zeros", gamma_initializer="ones",
                 in_channels: int = 0, **kwargs):
        super().__init__(center, scale, beta_initializer, gamma_initializer, in_channels)
        self._kwargs = {"eps": epsilon, "axis": axis, "center": center, "scale": scale}
        self._axis = axis
        self._epsilon = epsilon

    def forward(self, x):
        params = [self.gamma.data(), self.beta.data()]
        if self._axis == 1:
            return invoke("InstanceNorm", [x] + params, {"eps": self._epsilon})
        # the op normalises axis 1: move the channel axis there and back
        swap = {"dim1": 1, "dim2": self._axis}
        y = invoke("SwapAxis", [x], swap)
        y = invoke("InstanceNorm", [y] + params, {"eps": self._epsilon})
        return invoke("SwapAxis", [y], swap)

    def infer_shape(self, x, *args) -> None:
        # MXNet 2 reads axis 1 whatever `axis` is (so axis != 1 only works there when both
        # sizes agree); the normalised axis is the one that must match gamma/beta
        self._set_channels(x.shape[self._axis])


class GroupNorm(_GammaBeta):
    """Group normalisation: channels split into `num_groups` groups, each normalised."""

    def __init__(self, num_groups: int = 1, epsilon: float = 1e-5, center: bool = True,
                 scale: bool = True, beta_initializer="zeros", gamma_initializer="ones",
                 in_channels: int = 0):
        super().__init__(center, scale, beta_initializer, gamma_initializer, in_channels)
        self._kwargs = {"eps": epsilon, "num_groups": num_groups, "center": center,
                        "scale": scale}
        self._num_groups = num_groups
        self._epsilon = epsilon

    def forward(self, data):
        return invoke("GroupNorm", [data, self.gamma.data(), self.beta.data()],
                      {"num_groups": self._num_groups, "eps": self._epsilon})

    def infer_shape(self, data, *args) -> None:
        self._set_channels(data.shape[1])
