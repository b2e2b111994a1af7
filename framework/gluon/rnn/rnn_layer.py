"""Fused recurrent layers: RNN, LSTM, GRU (Gluon 2.0: one flat `rnn_param` per layer object).

The flat vector is packed as MXNet/cuDNN do (every weight, layer by layer and direction by
direction, i2h then h2h, then every bias), so `arg:lstm.rnn_param` from a real MXNet 2 export
loads unchanged. The computation is the registry's fused `RNN` operator.
"""
from __future__ import annotations

import json

from ... import initializer as _init
from ... import numpy as _np
from ...dispatch import invoke
from ...ndarray import ndarray
from ..hybrid_block import HybridBlock
from ..parameter import Parameter

__all__ = ["RNN", "LSTM", "GRU", "RNNFused"]

_GATES = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}


def _jsonable(init):
    """Initializer objects inside RNNFused kwargs are stored as their JSON form."""
    if init is None or isinstance(init, (str, int, float, bool)):
        return init
    return json.loads(init.dumps()) if hasattr(init, "dumps") else str(init)


class RNNFused(_init.Initializer):
    """Initialises the flat fused-RNN vector piece by piece with the i2h/h2h/h2r initializers."""

    def __init__(self, mode: str, num_layers: int, state_size: int, bidirectional: bool = False,
                 projection_size: int | None = None, i2h_weight_initializer=None,
                 h2h_weight_initializer=None, i2h_bias_initializer=None,
                 h2h_bias_initializer=None, h2r_weight_initializer=None):
        super().__init__(mode=mode, num_layers=num_layers, state_size=state_size,
                         bidirectional=bidirectional, projection_size=projection_size,
                         i2h_weight_initializer=_jsonable(i2h_weight_initializer),
                         h2h_weight_initializer=_jsonable(h2h_weight_initializer),
                         i2h_bias_initializer=_jsonable(i2h_bias_initializer),
                         h2h_bias_initializer=_jsonable(h2h_bias_initializer),
                         h2r_weight_initializer=_jsonable(h2r_weight_initializer))
        self._inits = {"i2h_weight": i2h_weight_initializer, "h2h_weight": h2h_weight_initializer,
                       "i2h_bias": i2h_bias_initializer, "h2h_bias": h2h_bias_initializer,
                       "h2r_weight": h2r_weight_initializer}
        self._mode, self._layers, self._hidden = mode, num_layers, state_size
        self._dir = 2 if bidirectional else 1
        self._proj = projection_size

    def set_initializer(self, init) -> None:
        """What `initialize(init)` does to the fused vector, as MXNet 2 does it: each piece
        without an initializer of its own takes `init`; a piece that had one falls back to
        'uniform' (weights) or 'zeros' (biases). MXNet tests the i2h bias for both biases."""
        had = {k: bool(v) for k, v in self._inits.items()}
        self._inits = {
            "i2h_weight": init if not had["i2h_weight"] else "uniform",
            "h2h_weight": init if not had["h2h_weight"] else "uniform",
            "i2h_bias": init if not had["i2h_bias"] else "zeros",
            "h2h_bias": init if not had["i2h_bias"] else "zeros",
            "h2r_weight": init if not had["h2r_weight"] else "uniform"}

    def _pieces(self, total: int):
        """(kind, length) of every piece of the flat vector, in packing order."""
        G, H, D, L, P = _GATES[self._mode], self._hidden, self._dir, self._layers, self._proj
        R = P or H
        size = G * H * D
        rest = (R * D + R + 2) * size
        proj = P * H * L * D if P else 0
        n_in = (total - proj - (L - 1) * rest) // size - 2 - R
        pieces = []
        for layer in range(L):
            for _ in range(D):
                pieces.append(("i2h_weight", G * H * (n_in if layer == 0 else R * D)))
                pieces.append(("h2h_weight", G * H * R))
                if P:
                    pieces.append(("h2r_weight", P * H))
        for _ in range(L * D):
            pieces += [("i2h_bias", G * H), ("h2h_bias", G * H)]
        return pieces

    def _init_weight(self, name, arr) -> None:
        off = 0
        for kind, n in self._pieces(arr.shape[0]):
            init = self._inits[kind]
            if init is None:
                init = "zeros" if kind.endswith("bias") else _init.Uniform()
            piece = arr[off:off + n]
            _init.create(init)._init_weight(_init.InitDesc(kind), piece)
            off += n


if "rnnfused" not in _init._REGISTRY:
    _init.register(RNNFused)


class _RNNLayer(HybridBlock):
    """Implementation shared by RNN, LSTM and GRU."""

    def __init__(self, hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                 i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                 h2h_bias_initializer, mode, projection_size, h2r_weight_initializer,
                 lstm_state_clip_min, lstm_state_clip_max, lstm_state_clip_nan, dtype,
                 use_sequence_length=False, **kwargs):
        super().__init__(**kwargs)
        assert layout in ("TNC", "NTC"), f"Invalid layout {layout}; must be one of ['TNC' or 'NTC']"
        self._hidden_size = hidden_size
        self._projection_size = projection_size if projection_size else None
        self._num_layers = num_layers
        self._mode = mode
        self._layout = layout
        self._dropout = dropout
        self._dir = 2 if bidirectional else 1
        self._input_size = input_size
        self._lstm_state_clip_min = lstm_state_clip_min
        self._lstm_state_clip_max = lstm_state_clip_max
        self._lstm_state_clip_nan = lstm_state_clip_nan
        self._dtype = dtype
        self._use_sequence_length = use_sequence_length
        self.skip_states = None
        self._gates = _GATES[mode]
        init = RNNFused(mode, num_layers, hidden_size, bidirectional, projection_size,
                        i2h_weight_initializer=i2h_weight_initializer,
                        h2h_weight_initializer=h2h_weight_initializer,
                        i2h_bias_initializer=i2h_bias_initializer,
                        h2h_bias_initializer=h2h_bias_initializer,
                        h2r_weight_initializer=h2r_weight_initializer)
        self.rnn_param = Parameter("rnn_param", shape=(-1,), init=init, allow_deferred_init=True,
                                   dtype=dtype)

    def __repr__(self) -> str:
        s = f"{self.__class__.__name__}({self._input_size if self._input_size else None} -> " \
            f"{self._hidden_size}, {self._layout}"
        if self._num_layers != 1:
            s += f", num_layers={self._num_layers}"
        if self._dropout != 0:
            s += f", dropout={self._dropout}"
        if self._dir == 2:
            s += ", bidirectional"
        return s + ")"

    def state_info(self, batch_size: int = 0) -> list[dict]:
        raise NotImplementedError

    def cast(self, dtype) -> None:
        super().cast(dtype)
        self._dtype = dtype

    def begin_state(self, batch_size: int = 0, func=None, **kwargs) -> list:
        """Initial states (zeros by default), one array per entry of `state_info`."""
        func = _np.zeros if func is None else func
        states = []
        for info in self.state_info(batch_size):
            info = dict(info)
            info.update(kwargs)
            info.pop("__layout__", None)
            states.append(func(shape=info.pop("shape", ()), device=info.pop("device", None),
                               dtype=info.pop("dtype", "float32")))
        return states

    def __call__(self, inputs, states=None, sequence_length=None, **kwargs):
        self.skip_states = states is None
        if states is None:
            batch_size = inputs.shape[self._layout.find("N")]
            states = self.begin_state(batch_size, dtype=str(inputs.dtype))
        if isinstance(states, ndarray):
            states = [states]
        if self._use_sequence_length:
            return super().__call__(inputs, states, sequence_length, **kwargs)
        return super().__call__(inputs, states, **kwargs)

    def forward(self, inputs, states, sequence_length=None):
        batch_size = inputs.shape[self._layout.find("N")]
        for state, info in zip(states, self.state_info(batch_size)):
            if tuple(state.shape) != info["shape"]:
                raise ValueError(f"Invalid recurrent state shape. Expecting {info['shape']}, "
                                 f"got {tuple(state.shape)}.")
        out = self._forward_kernel(inputs, states, sequence_length)
        return out[0] if self.skip_states else out

    def _param_size(self, ni: int) -> int:
        ng, nh, d = self._gates, self._hidden_size, self._dir
        size = nh * d * ng
        r = self._projection_size or nh
        total = (ni + r + 2) * size + (self._num_layers - 1) * (r * d + r + 2) * size
        if self._projection_size:
            total += self._projection_size * nh * self._num_layers * d
        return total

    def infer_shape(self, inputs, *args) -> None:
        assert inputs.ndim == 3, ("Input data should be rank-3 tensor of dim [sequence length, "
                                  "batch size, input size]")
        self._input_size = inputs.shape[2]
        self.rnn_param.shape = (self._param_size(inputs.shape[2]),)

    def _forward_kernel(self, inputs, states, sequence_length):
        swap = {"dim1": 0, "dim2": 1}
        if self._layout == "NTC":
            inputs = invoke("SwapAxis", [inputs], swap)
        args = [inputs, self.rnn_param.data()] + list(states)
        if self._use_sequence_length:
            args.append(sequence_length)
        attrs = {"state_size": self._hidden_size, "num_layers": self._num_layers,
                 "bidirectional": self._dir == 2, "p": self._dropout, "state_outputs": True,
                 "mode": self._mode, "projection_size": self._projection_size,
                 "lstm_state_clip_min": self._lstm_state_clip_min,
                 "lstm_state_clip_max": self._lstm_state_clip_max,
                 "lstm_state_clip_nan": bool(self._lstm_state_clip_nan),
                 "use_sequence_length": self._use_sequence_length}
        rnn = invoke("RNN", args, attrs)
        outputs, new_states = rnn[0], list(rnn[1:])
        if self._layout == "NTC":
            outputs = invoke("SwapAxis", [outputs], swap)
        return outputs, new_states


class RNN(_RNNLayer):
    """Multi-layer Elman RNN with relu or tanh activation."""

    def __init__(self, hidden_size: int, num_layers: int = 1, activation: str = "relu",
                 layout: str = "TNC", dropout: float = 0, bidirectional: bool = False,
                 i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros",
                 input_size: int = 0, dtype="float32", **kwargs):
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                         i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                         h2h_bias_initializer, "rnn_" + activation, None, None, None, None,
                         False, dtype, **kwargs)

    def state_info(self, batch_size: int = 0) -> list[dict]:
        return [{"shape": (self._num_layers * self._dir, batch_size, self._hidden_size),
                 "__layout__": "LNC", "dtype": self._dtype}]


class LSTM(_RNNLayer):
    """Multi-layer long short-term memory RNN (optionally with a projection, LSTMP)."""

    def __init__(self, hidden_size: int, num_layers: int = 1, layout: str = "TNC",
                 dropout: float = 0, bidirectional: bool = False, input_size: int = 0,
                 i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros",
                 projection_size: int | None = None, h2r_weight_initializer=None,
                 state_clip_min=None, state_clip_max=None, state_clip_nan: bool = False,
                 dtype="float32", **kwargs):
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                         i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                         h2h_bias_initializer, "lstm", projection_size, h2r_weight_initializer,
                         state_clip_min, state_clip_max, state_clip_nan, dtype, **kwargs)

    def state_info(self, batch_size: int = 0) -> list[dict]:
        h = self._projection_size or self._hidden_size
        n = self._num_layers * self._dir
        return [{"shape": (n, batch_size, h), "__layout__": "LNC", "dtype": self._dtype},
                {"shape": (n, batch_size, self._hidden_size), "__layout__": "LNC",
                 "dtype": self._dtype}]


class GRU(_RNNLayer):
    """Multi-layer gated recurrent unit RNN (cuDNN's "linear before reset" variant)."""

    def __init__(self, hidden_size: int, num_layers: int = 1, layout: str = "TNC",
                 dropout: float = 0, bidirectional: bool = False, input_size: int = 0,
                 i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", dtype="float32",
                 **kwargs):
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                         i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                         h2h_bias_initializer, "gru", None, None, None, None, False, dtype,
                         **kwargs)

    def state_info(self, batch_size: int = 0) -> list[dict]:
        return [{"shape": (self._num_layers * self._dir, batch_size, self._hidden_size),
                 "__layout__": "LNC", "dtype": self._dtype}]
