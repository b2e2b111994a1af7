"""Convolution, transposed convolution and pooling layers (1-D, 2-D, 3-D)."""
from __future__ import annotations

from numbers import Number

from ...dispatch import invoke
from ..hybrid_block import HybridBlock
from ..parameter import Parameter
from .activations import Activation

__all__ = ["Conv1D", "Conv2D", "Conv3D", "Conv1DTranspose", "Conv2DTranspose", "Conv3DTranspose",
           "MaxPool1D", "MaxPool2D", "MaxPool3D", "AvgPool1D", "AvgPool2D", "AvgPool3D",
           "GlobalMaxPool1D", "GlobalMaxPool2D", "GlobalMaxPool3D", "GlobalAvgPool1D",
           "GlobalAvgPool2D", "GlobalAvgPool3D"]

_LAYOUTS = {1: ("NCW", "NWC"), 2: ("NCHW", "NHWC"), 3: ("NCDHW", "NDHWC")}


def _tuple(v, n: int, what: str) -> tuple:
    if isinstance(v, Number):
        return (int(v),) * n
    v = tuple(v)
    if len(v) != n:
        raise AssertionError(f"{what} must be a number or a list of {n} ints")
    return v


def _check_layout(layout: str, n: int) -> None:
    ok = _LAYOUTS[n]
    assert layout in ok, f"Only supports {' and '.join(repr(x) for x in ok)} layout for now"


class _Conv(HybridBlock):
    def __init__(self, channels, kernel_size, strides, padding, dilation, groups, layout,
                 in_channels=0, activation=None, use_bias=True, weight_initializer=None,
                 bias_initializer="zeros", op_name="Convolution", adj=None):
        super().__init__()
        n = len(kernel_size)
        self._channels = channels
        self._in_channels = in_channels
        self._op_name = op_name
        self._kwargs = {"kernel": tuple(kernel_size), "stride": _tuple(strides, n, "strides"),
                        "dilate": _tuple(dilation, n, "dilation"),
                        "pad": _tuple(padding, n, "padding"), "num_filter": channels,
                        "num_group": groups, "no_bias": not use_bias, "layout": layout}
        if adj is not None:
            self._kwargs["adj"] = adj
        # weight shape before inference: unknown dims are -1 (in_channels is not used here)
        wshape = [-1] * (n + 2)
        spatial = [i for i, c in enumerate(layout) if c not in "NC"]
        for i, k in zip(spatial, kernel_size):
            wshape[i] = k
        if op_name == "Convolution":
            wshape[layout.find("N")] = channels // groups
            wshape[0] *= groups
        else:
            wshape[layout.find("C")] = channels // groups
        self.weight = Parameter("weight", shape=tuple(wshape), init=weight_initializer,
                                allow_deferred_init=True)
        self.bias = Parameter("bias", shape=(channels,), init=bias_initializer,
                              allow_deferred_init=True) if use_bias else None
        self.act = Activation(activation) if activation is not None else None

    def forward(self, x):
        ins = [x, self.weight.data()] + ([self.bias.data()] if self.bias is not None else [])
        out = invoke(self._op_name, ins, self._kwargs)
        return self.act(out) if self.act is not None else out

    def infer_shape(self, x, *args) -> None:
        layout = self._kwargs["layout"]
        c = x.shape[layout.find("C")]
        shape = list(self.weight.shape)
        if self._op_name == "Convolution":
            shape[layout.find("C")] = c // self._kwargs["num_group"]
        else:
            shape[layout.find("N")] = c
        self.weight.shape = tuple(shape)

    def _alias(self) -> str:
        return "conv"

    def __repr__(self) -> str:
        k = self._kwargs
        n = len(k["kernel"])
        s = "{name}({mapping}, kernel_size={kernel}, stride={stride}"
        if k["pad"] != (0,) * n:
            s += ", padding={pad}"
        if k["dilate"] != (1,) * n:
            s += ", dilation={dilate}"
        # MXNet tests `out_pad` but stores `outpad`, so output_padding never shows: reproduced
        if hasattr(self, "out_pad") and self.out_pad != (0,) * n:
            s += f", output_padding={self.out_pad}"
        if k["num_group"] != 1:
            s += ", groups={num_group}"
        if self.bias is None:
            s += ", bias=False"
        if self.act:
            s += f", {self.act}"
        s += ")"
        shape = self.weight.shape
        a, b = (shape[1] if shape[1] else None), shape[0]
        mapping = f"{b} -> {a}" if self._op_name == "Deconvolution" else f"{a} -> {b}"
        return s.format(name=self.__class__.__name__, mapping=mapping, **k)


def _make_conv(n: int, transpose: bool):
    default_layout = _LAYOUTS[n][0]

    if not transpose:
        def __init__(self, channels, kernel_size, strides=1, padding=0, dilation=1, groups=1,
                     layout=default_layout, activation=None, use_bias=True,
                     weight_initializer=None, bias_initializer="zeros", in_channels=0, **kwargs):
            _check_layout(layout, n)
            kernel_size = _tuple(kernel_size, n, "kernel_size")
            _Conv.__init__(self, channels, kernel_size, strides, padding, dilation, groups, layout,
                           in_channels, activation, use_bias, weight_initializer, bias_initializer,
                           **kwargs)
    else:
        def __init__(self, channels, kernel_size, strides=1, padding=0, output_padding=0,
                     dilation=1, groups=1, layout=default_layout, activation=None, use_bias=True,
                     weight_initializer=None, bias_initializer="zeros", in_channels=0, **kwargs):
            _check_layout(layout, n)
            kernel_size = _tuple(kernel_size, n, "kernel_size")
            output_padding = _tuple(output_padding, n, "output_padding")
            _Conv.__init__(self, channels, kernel_size, strides, padding, dilation, groups, layout,
                           in_channels, activation, use_bias, weight_initializer, bias_initializer,
                           op_name="Deconvolution", adj=output_padding, **kwargs)
            self.outpad = output_padding
    return __init__


Conv1D = type("Conv1D", (_Conv,), {"__init__": _make_conv(1, False), "__doc__": "1-D convolution."})
Conv2D = type("Conv2D", (_Conv,), {"__init__": _make_conv(2, False), "__doc__": "2-D convolution."})
Conv3D = type("Conv3D", (_Conv,), {"__init__": _make_conv(3, False), "__doc__": "3-D convolution."})
Conv1DTranspose = type("Conv1DTranspose", (_Conv,), {"__init__": _make_conv(1, True)})
Conv2DTranspose = type("Conv2DTranspose", (_Conv,), {"__init__": _make_conv(2, True)})
Conv3DTranspose = type("Conv3DTranspose", (_Conv,), {"__init__": _make_conv(3, True)})
for _c in (Conv1D, Conv2D, Conv3D, Conv1DTranspose, Conv2DTranspose, Conv3DTranspose):
    _c.__module__ = __name__


class _Pooling(HybridBlock):
    def __init__(self, pool_size, strides, padding, ceil_mode, global_pool, pool_type, layout,
                 count_include_pad=None, **kwargs):
        super().__init__(**kwargs)
        n = len(pool_size)
        if strides is None:
            strides = pool_size
        self._kwargs = {"kernel": tuple(pool_size), "stride": _tuple(strides, n, "strides"),
                        "pad": _tuple(padding, n, "padding"), "global_pool": global_pool,
                        "pool_type": pool_type, "layout": layout,
                        "pooling_convention": "full" if ceil_mode else "valid"}
        if count_include_pad is not None:
            self._kwargs["count_include_pad"] = count_include_pad

    def forward(self, x):
        return invoke("Pooling", [x], self._kwargs)

    def _alias(self) -> str:
        return "pool"

    def __repr__(self) -> str:
        s = ("{name}(size={kernel}, stride={stride}, padding={pad}, ceil_mode={ceil_mode}"
             ", global_pool={global_pool}, pool_type={pool_type}, layout={layout})")
        return s.format(name=self.__class__.__name__,
                        ceil_mode=self._kwargs["pooling_convention"] == "full", **self._kwargs)


def _make_pool(n: int, pool_type: str, global_: bool):
    default_layout = _LAYOUTS[n][0]
    if global_:
        def __init__(self, layout=default_layout, **kwargs):
            _check_layout(layout, n)
            _Pooling.__init__(self, (1,) * n, None, 0, True, True, pool_type, layout, **kwargs)
    elif pool_type == "max":
        def __init__(self, pool_size=(2,) * n if n > 1 else 2, strides=None, padding=0,
                     layout=default_layout, ceil_mode=False, **kwargs):
            _check_layout(layout, n)
            pool_size = _tuple(pool_size, n, "pool_size")
            _Pooling.__init__(self, pool_size, strides, padding, ceil_mode, False, "max", layout,
                              **kwargs)
    else:
        def __init__(self, pool_size=(2,) * n if n > 1 else 2, strides=None, padding=0,
                     ceil_mode=False, layout=default_layout, count_include_pad=True, **kwargs):
            _check_layout(layout, n)
            pool_size = _tuple(pool_size, n, "pool_size")
            _Pooling.__init__(self, pool_size, strides, padding, ceil_mode, False, "avg", layout,
                              count_include_pad, **kwargs)
    return __init__


for _n in (1, 2, 3):
    for _name, _pt, _g in ((f"MaxPool{_n}D", "max", False), (f"AvgPool{_n}D", "avg", False),
                           (f"GlobalMaxPool{_n}D", "max", True), (f"GlobalAvgPool{_n}D", "avg", True)):
        _cls = type(_name, (_Pooling,), {"__init__": _make_pool(_n, _pt, _g)})
        _cls.__module__ = __name__
        globals()[_name] = _cls
