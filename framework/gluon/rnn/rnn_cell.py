"""Recurrent cells (one time step each): RNNCell, LSTMCell, GRUCell, and sequential stacks.

Each cell keeps MXNet's four parameters `i2h_weight`, `h2h_weight`, `i2h_bias`, `h2h_bias`
(gates stacked along axis 0: LSTM i, f, g, o; GRU r, z, n) and `unroll` runs it over a sequence.
"""
from __future__ import annotations

from ... import numpy as _np
from ...dispatch import invoke
from ...ndarray import ndarray
from ..block import Block, _indent
from ..hybrid_block import HybridBlock
from ..nn.advanced_activations import LeakyReLU
from ..parameter import Parameter

__all__ = ["RecurrentCell", "HybridRecurrentCell", "RNNCell", "LSTMCell", "GRUCell",
           "SequentialRNNCell", "HybridSequentialRNNCell"]


def _split_time(inputs, length, axis: int) -> list:
    """One array per time step (MXNet's slice_channel with squeeze_axis)."""
    if isinstance(inputs, (list, tuple)):
        assert length is None or len(inputs) == length
        return list(inputs)
    assert length is None or length == inputs.shape[axis]
    out = invoke("SliceChannel", [inputs], {"axis": axis, "num_outputs": inputs.shape[axis],
                                            "squeeze_axis": True})
    return list(out) if isinstance(out, tuple) else [out]


def _merge_time(outputs: list, axis: int, merge):
    if merge:
        return invoke("stack", list(outputs), {"axis": axis, "num_args": len(outputs)})
    return outputs


def _batch_size(inputs, layout: str) -> int:
    if isinstance(inputs, ndarray):
        return inputs.shape[layout.find("N")]
    return inputs[0].shape[0]


class RecurrentCell(Block):
    """Abstract base class for RNN cells."""

    def __init__(self):
        super().__init__()
        self._modified = False
        self.reset()

    def reset(self) -> None:
        self._init_counter = -1
        self._counter = -1
        for _, cell in self._child_items():
            cell.reset()

    def state_info(self, batch_size: int = 0) -> list[dict]:
        raise NotImplementedError()

    def begin_state(self, batch_size: int = 0, func=None, **kwargs) -> list:
        assert not self._modified, (
            "After applying modifier cells (e.g. ZoneoutCell) the base cell cannot be called "
            "directly. Call the modifier cell instead.")
        func = _np.zeros if func is None else func
        states = []
        for info in self.state_info(batch_size):
            info = dict(info or {})
            info.update(kwargs)
            info.pop("__layout__", None)
            states.append(func(shape=info.pop("shape", ()), device=info.pop("device", None),
                               dtype=info.pop("dtype", "float32")))
        return states

    def unroll(self, length: int, inputs, begin_state=None, layout: str = "NTC",
               merge_outputs=None, valid_length=None):
        """Run the cell `length` steps; returns (outputs, last states)."""
        self.reset()
        axis = layout.find("T")
        steps = _split_time(inputs, length, axis)
        states = begin_state if begin_state is not None else \
            self.begin_state(_batch_size(inputs, layout))
        outputs, all_states = [], []
        for i in range(length):
            output, states = self(steps[i], states)
            outputs.append(output)
            if valid_length is not None:
                all_states.append(states)
        if valid_length is not None:
            states = [invoke("SequenceLast", [invoke("stack", list(s), {"axis": 0, "num_args": len(s)}),
                                              valid_length],
                             {"use_sequence_length": True, "axis": 0}) for s in zip(*all_states)]
            merged = invoke("stack", outputs, {"axis": axis, "num_args": len(outputs)})
            merged = invoke("SequenceMask", [merged, valid_length],
                            {"use_sequence_length": True, "axis": axis})
            return (merged if merge_outputs is not False else _split_time(merged, length, axis),
                    states)
        return _merge_time(outputs, axis, merge_outputs), states

    def _get_activation(self, x, activation):
        if isinstance(activation, str):
            return invoke("Activation", [x], {"act_type": activation})
        if isinstance(activation, LeakyReLU):
            return invoke("LeakyReLU", [x], {"act_type": "leaky", "slope": activation._alpha})
        return activation(x)


class HybridRecurrentCell(RecurrentCell, HybridBlock):
    """Base class of cells that can be hybridized."""

    def forward(self, x, *args):
        raise NotImplementedError


class _GatedCell(HybridRecurrentCell):
    """A cell with `_gates` projections of input and hidden state (RNN 1, GRU 3, LSTM 4)."""
    _gates = 1
    _n_states = 1

    def __init__(self, hidden_size: int, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", input_size: int = 0,
                 activation="tanh", recurrent_activation="sigmoid"):
        super().__init__()
        self._activation = activation
        self._recurrent_activation = recurrent_activation
        n = self._gates * hidden_size
        self._hidden_size = hidden_size
        self._input_size = input_size
        self.i2h_weight = Parameter("i2h_weight", shape=(n, input_size),
                                    init=i2h_weight_initializer, allow_deferred_init=True)
        self.h2h_weight = Parameter("h2h_weight", shape=(n, hidden_size),
                                    init=h2h_weight_initializer, allow_deferred_init=True)
        self.i2h_bias = Parameter("i2h_bias", shape=(n,), init=i2h_bias_initializer,
                                  allow_deferred_init=True)
        self.h2h_bias = Parameter("h2h_bias", shape=(n,), init=h2h_bias_initializer,
                                  allow_deferred_init=True)

    def state_info(self, batch_size: int = 0) -> list[dict]:
        return [{"shape": (batch_size, self._hidden_size), "__layout__": "NC"}
                for _ in range(self._n_states)]

    def _mapping(self) -> str:
        shape = self.i2h_weight.shape
        return f"{shape[1] if shape[1] else None} -> {shape[0]}"

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self._mapping()})"

    def _out_width(self) -> int:
        return self._hidden_size

    def infer_shape(self, *args) -> None:
        """MXNet 2's `infer_shape(i, x, is_bidirect)`: layer `i` of a stack reads `x`'s width
        (i == 0) or the previous layer's outputs (both directions when `is_bidirect`). Called
        with `(inputs, states)` on a deferred first step, it reads the inputs' width."""
        if args and isinstance(args[0], int):
            i, x, bidir = (list(args) + [None, False])[:3]
            width = x.shape[x.ndim - 1] if i == 0 else self._out_width() * (2 if bidir else 1)
        else:
            width = args[0].shape[args[0].ndim - 1]
        self.i2h_weight.shape = (self._gates * self._hidden_size, width)

    def _projections(self, inputs, h):
        n = self._gates * self._hidden_size
        fc = {"num_hidden": n, "no_bias": False, "flatten": True}
        i2h = invoke("FullyConnected", [inputs, self.i2h_weight.data(), self.i2h_bias.data()], fc)
        h2h = invoke("FullyConnected", [h, self.h2h_weight.data(), self.h2h_bias.data()], fc)
        return i2h, h2h

    def __call__(self, inputs, states):
        self._counter += 1
        return super().__call__(inputs, states)


class RNNCell(_GatedCell):
    """Elman cell: `h' = act(W_i x + b_i + W_h h + b_h)`."""

    def __init__(self, hidden_size: int, activation="tanh", i2h_weight_initializer=None,
                 h2h_weight_initializer=None, i2h_bias_initializer="zeros",
                 h2h_bias_initializer="zeros", input_size: int = 0):
        super().__init__(hidden_size, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, input_size)
        self._activation = activation

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self._mapping()}, {self._activation})"

    def _alias(self) -> str:
        return "rnn"

    def forward(self, inputs, states):
        i2h, h2h = self._projections(inputs, states[0])
        output = self._get_activation(i2h + h2h, self._activation)
        return output, [output]


class LSTMCell(_GatedCell):
    """Long short-term memory cell; states `[h, c]`."""
    _gates = 4
    _n_states = 2

    def _alias(self) -> str:
        return "lstm"

    def forward(self, inputs, states):
        i2h, h2h = self._projections(inputs, states[0])
        gates = invoke("SliceChannel", [i2h + h2h], {"num_outputs": 4, "axis": 1})
        in_gate = self._get_activation(gates[0], self._recurrent_activation)
        forget_gate = self._get_activation(gates[1], self._recurrent_activation)
        in_transform = self._get_activation(gates[2], self._activation)
        out_gate = self._get_activation(gates[3], self._recurrent_activation)
        next_c = forget_gate * states[1] + in_gate * in_transform
        next_h = out_gate * invoke("Activation", [next_c], {"act_type": self._activation})
        return next_h, [next_h, next_c]


class GRUCell(_GatedCell):
    """Gated recurrent unit cell (reset gate applied after the h2h projection, as cuDNN)."""
    _gates = 3

    def _alias(self) -> str:
        return "gru"

    def forward(self, inputs, states):
        prev_h = states[0]
        i2h, h2h = self._projections(inputs, prev_h)
        i_r, i_z, i_n = invoke("SliceChannel", [i2h], {"num_outputs": 3, "axis": 1})
        h_r, h_z, h_n = invoke("SliceChannel", [h2h], {"num_outputs": 3, "axis": 1})
        reset_gate = self._get_activation(i_r + h_r, self._recurrent_activation)
        update_gate = self._get_activation(i_z + h_z, self._recurrent_activation)
        candidate = self._get_activation(i_n + reset_gate * h_n, self._activation)
        next_h = (1 - update_gate) * candidate + update_gate * prev_h
        return next_h, [next_h]


class _SeqCellMixin:
    def __repr__(self) -> str:
        body = "\n".join(f"({k}): {_indent(repr(c), 2)}" for k, c in self._child_items())
        return f"{self.__class__.__name__}(\n{body}\n)"

    def add(self, cell) -> None:
        self._layers.append(cell)
        self.register_child(cell)

    def state_info(self, batch_size: int = 0) -> list[dict]:
        return sum([c.state_info(batch_size) for _, c in self._child_items()], [])

    def begin_state(self, **kwargs) -> list:
        return sum([c.begin_state(**kwargs) for _, c in self._child_items()], [])

    def _step(self, inputs, states):
        next_states, p = [], 0
        for _, cell in self._child_items():
            n = len(cell.state_info())
            inputs, state = cell(inputs, states[p:p + n])
            p += n
            next_states.append(state)
        return inputs, sum(next_states, [])

    def unroll(self, length: int, inputs, begin_state=None, layout: str = "NTC",
               merge_outputs=None, valid_length=None):
        self.reset()
        if begin_state is None:
            begin_state = self.begin_state(batch_size=_batch_size(inputs, layout))
        p, next_states = 0, []
        cells = [c for _, c in self._child_items()]
        for i, cell in enumerate(cells):
            n = len(cell.state_info())
            inputs, states = cell.unroll(length, inputs, begin_state[p:p + n], layout,
                                         None if i < len(cells) - 1 else merge_outputs,
                                         valid_length)
            p += n
            next_states.extend(states)
        return inputs, next_states

    def _infer_layers(self, x, is_bidirect: bool) -> None:
        for j, (_, cell) in enumerate(self._child_items()):
            cell.infer_shape(j, x, is_bidirect)

    def infer_shape(self, i, x, is_bidirect=False) -> None:
        """MXNet 2's stack signature: child `j` is layer `j`."""
        self._infer_layers(x, is_bidirect)

    def __getitem__(self, i):
        return self._children[str(i)]()

    def __len__(self) -> int:
        return len(self._children)


class SequentialRNNCell(_SeqCellMixin, RecurrentCell):
    """Stacks cells: the output of each is the input of the next."""

    def __init__(self):
        super().__init__()
        self._layers: list = []

    def __call__(self, inputs, states):
        self._counter += 1
        return self._step(inputs, states)


class HybridSequentialRNNCell(_SeqCellMixin, HybridRecurrentCell):
    """Hybridizable stack of hybrid cells."""

    def __init__(self):
        super().__init__()
        self._layers: list = []

    def infer_shape(self, *args) -> None:
        """`infer_shape(i, x, is_bidirect)` (MXNet 2): child `j` is layer `j` of the stack (the
        hybrid stack's layers are one-directional). Called by a deferred first step instead,
        children infer on their own first call."""
        if args and isinstance(args[0], int):
            self._infer_layers(args[1], False)

    def forward(self, inputs, states):
        return self._step(inputs, states)
