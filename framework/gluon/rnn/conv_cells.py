"""Convolutional recurrent cells (Conv1D/2D/3D × RNN/LSTM/GRU): the gated cells' equations with
convolutions in place of the dense projections. Channel-first layouts (NCW, NCHW, NCDHW); the
state has `hidden_channels` channels and the i2h convolution's spatial size (stride 1), and the
h2h convolution keeps that size ("same" padding, so its kernel must be odd).
"""
from __future__ import annotations

from ... import numpy_extension as npx
from ..parameter import Parameter
from .rnn_cell import HybridRecurrentCell

__all__ = [f"Conv{d}D{kind}Cell" for d in (1, 2, 3) for kind in ("RNN", "LSTM", "GRU")]


def _tuple(v, n: int, what: str) -> tuple:
    t = (v,) * n if isinstance(v, int) else tuple(v)
    if len(t) != n:
        raise ValueError(f"{what} must have {n} values, got {v!r}")
    return t


class _ConvRecurrentCell(HybridRecurrentCell):
    _dims = 1
    _gates = 1
    _n_states = 1

    def __init__(self, input_shape, hidden_channels, i2h_kernel, h2h_kernel, i2h_pad=0,
                 i2h_dilate=1, h2h_dilate=1, i2h_weight_initializer=None,
                 h2h_weight_initializer=None, i2h_bias_initializer="zeros",
                 h2h_bias_initializer="zeros", conv_layout=None, activation="tanh"):
        super().__init__()
        n = self._dims
        layout = conv_layout or ("NCW", "NCHW", "NCDHW")[n - 1]
        if not layout.startswith("NC"):
            raise NotImplementedError(f"conv_layout {layout!r}: only channel-first layouts")
        self._input_shape, self._hidden = tuple(input_shape), hidden_channels
        self._activation = activation
        self._i2h = {"kernel": _tuple(i2h_kernel, n, "i2h_kernel"),
                     "pad": _tuple(i2h_pad, n, "i2h_pad"),
                     "dilate": _tuple(i2h_dilate, n, "i2h_dilate")}
        hk, hd = _tuple(h2h_kernel, n, "h2h_kernel"), _tuple(h2h_dilate, n, "h2h_dilate")
        if any(k % 2 == 0 for k in hk):
            raise ValueError(f"h2h_kernel must be odd to keep the state's size, got {hk}")
        self._h2h = {"kernel": hk, "pad": tuple(d * (k - 1) // 2 for k, d in zip(hk, hd)),
                     "dilate": hd}
        self._state_shape = (hidden_channels,) + tuple(
            s + 2 * p - d * (k - 1) for s, k, p, d in
            zip(self._input_shape[1:], self._i2h["kernel"], self._i2h["pad"],
                self._i2h["dilate"]))
        g = self._gates * hidden_channels
        self.i2h_weight = Parameter("i2h_weight", shape=(g, self._input_shape[0]) +
                                    self._i2h["kernel"], init=i2h_weight_initializer,
                                    allow_deferred_init=True)
        self.h2h_weight = Parameter("h2h_weight", shape=(g, hidden_channels) + hk,
                                    init=h2h_weight_initializer, allow_deferred_init=True)
        self.i2h_bias = Parameter("i2h_bias", shape=(g,), init=i2h_bias_initializer,
                                  allow_deferred_init=True)
        self.h2h_bias = Parameter("h2h_bias", shape=(g,), init=h2h_bias_initializer,
                                  allow_deferred_init=True)

    def __repr__(self) -> str:
        return (f"{self.__class__.__name__}({self._input_shape} -> {self._state_shape}, "
                f"i2h_kernel={self._i2h['kernel']}, h2h_kernel={self._h2h['kernel']})")

    def state_info(self, batch_size: int = 0) -> list[dict]:
        return [{"shape": (batch_size,) + self._state_shape, "__layout__": "NC"}
                for _ in range(self._n_states)]

    def infer_shape(self, *args) -> None:
        """Shapes follow from `input_shape`, given at construction."""

    def _conv(self, x, weight, bias, geo):
        return npx.convolution(x, weight.data(), bias.data(), num_filter=weight.shape[0],
                               no_bias=False, **geo)

    def _projections(self, inputs, h):
        return (self._conv(inputs, self.i2h_weight, self.i2h_bias, self._i2h),
                self._conv(h, self.h2h_weight, self.h2h_bias, self._h2h))

    def _split(self, x):
        return npx.slice_channel(x, num_outputs=self._gates, axis=1)


class _ConvRNN(_ConvRecurrentCell):
    def forward(self, inputs, states):
        i2h, h2h = self._projections(inputs, states[0])
        out = self._get_activation(i2h + h2h, self._activation)
        return out, [out]


class _ConvLSTM(_ConvRecurrentCell):
    _gates, _n_states = 4, 2

    def forward(self, inputs, states):
        i2h, h2h = self._projections(inputs, states[0])
        i, f, c, o = self._split(i2h + h2h)
        sig = npx.sigmoid
        next_c = sig(f) * states[1] + sig(i) * self._get_activation(c, self._activation)
        next_h = sig(o) * self._get_activation(next_c, self._activation)
        return next_h, [next_h, next_c]


class _ConvGRU(_ConvRecurrentCell):
    _gates = 3

    def forward(self, inputs, states):
        i2h, h2h = self._projections(inputs, states[0])
        i_r, i_z, i_n = self._split(i2h)
        h_r, h_z, h_n = self._split(h2h)
        reset, update = npx.sigmoid(i_r + h_r), npx.sigmoid(i_z + h_z)
        cand = self._get_activation(i_n + reset * h_n, self._activation)
        next_h = (1 - update) * cand + update * states[0]
        return next_h, [next_h]


def _make(kind: type, dims: int) -> type:
    name = f"Conv{dims}D{kind.__name__[5:]}Cell"
    return type(name, (kind,), {"_dims": dims, "__doc__": f"{kind.__name__[5:]} cell with "
                                f"{dims}-D convolutions (input_shape is (C, spatial…)).",
                                "__module__": __name__})


for _d in (1, 2, 3):
    for _k in (_ConvRNN, _ConvLSTM, _ConvGRU):
        _cls = _make(_k, _d)
        globals()[_cls.__name__] = _cls
