"""Cells built around other cells: ModifierCell and its Residual/Zoneout/Dropout/
VariationalDropout forms, BidirectionalCell, and LSTMPCell (LSTM with a projected state).

Inference only: dropout and zoneout are identities outside training, exactly as in MXNet's
predict mode, so those cells pass their base cell's results through.
"""
from __future__ import annotations

from ... import numpy as _np
from ...dispatch import invoke
from ..parameter import Parameter
from .rnn_cell import (HybridRecurrentCell, _GatedCell, _batch_size, _merge_time,
                       _split_time)

__all__ = ["ModifierCell", "ResidualCell", "ZoneoutCell", "DropoutCell",
           "VariationalDropoutCell", "BidirectionalCell", "LSTMPCell"]


class DropoutCell(HybridRecurrentCell):
    """Dropout on each step's input (identity at inference); no state."""

    def __init__(self, rate: float, axes=()):
        super().__init__()
        self._rate, self._axes = rate, axes

    def __repr__(self) -> str:
        return f"DropoutCell(rate={self._rate}, axes={self._axes})"

    def state_info(self, batch_size: int = 0) -> list[dict]:
        return []

    def forward(self, inputs, states):
        return inputs, states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        self.reset()
        if isinstance(inputs, (list, tuple)):
            return _merge_time(list(inputs), layout.find("T"), merge_outputs), []
        keep = merge_outputs is None or merge_outputs
        return (inputs if keep else _split_time(inputs, length, layout.find("T"))), []


class ModifierCell(HybridRecurrentCell):
    """Wraps `base_cell`; the base cell's parameters and states are this cell's."""

    def __init__(self, base_cell):
        assert not base_cell._modified, \
            f"Cell {base_cell!r} is already modified. One cell cannot be modified twice"
        super().__init__()
        base_cell._modified = True
        self.base_cell = base_cell

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self.base_cell!r})"

    def state_info(self, batch_size: int = 0) -> list[dict]:
        return self.base_cell.state_info(batch_size)

    def begin_state(self, batch_size: int = 0, func=None, **kwargs) -> list:
        self.base_cell._modified = False
        try:
            return self.base_cell.begin_state(batch_size=batch_size, func=func, **kwargs)
        finally:
            self.base_cell._modified = True

    def infer_shape(self, i, x=None, is_bidirect=False) -> None:
        self.base_cell.infer_shape(i, x, is_bidirect)

    def forward(self, inputs, states):
        raise NotImplementedError


class ResidualCell(ModifierCell):
    """Adds each step's input to the base cell's output."""

    def forward(self, inputs, states):
        output, states = self.base_cell(inputs, states)
        return output + inputs, states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        self.reset()
        self.base_cell._modified = False
        try:
            outputs, states = self.base_cell.unroll(length, inputs, begin_state, layout,
                                                    merge_outputs, valid_length)
        finally:
            self.base_cell._modified = True
        axis = layout.find("T")
        if isinstance(outputs, list):
            if valid_length is not None:
                merged = self.unroll(length, inputs, begin_state, layout, True, valid_length)[0]
                return _split_time(merged, length, axis), states
            steps = _split_time(inputs, length, axis)
            return [o + x for o, x in zip(outputs, steps)], states
        merged = inputs if not isinstance(inputs, (list, tuple)) else _merge_time(inputs, axis, True)
        outputs = outputs + merged
        if valid_length is not None:          # the padding stays zero after the residual add
            outputs = invoke("SequenceMask", [outputs, valid_length],
                             {"use_sequence_length": True, "axis": axis})
        return outputs, states


class ZoneoutCell(ModifierCell):
    """Zoneout on outputs and states: at inference the new values are always kept."""

    def __init__(self, base_cell, zoneout_outputs: float = 0.0, zoneout_states: float = 0.0):
        super().__init__(base_cell)
        self.zoneout_outputs, self.zoneout_states = zoneout_outputs, zoneout_states

    def __repr__(self) -> str:
        return (f"ZoneoutCell(p_out={self.zoneout_outputs}, p_state={self.zoneout_states}, "
                f"{self.base_cell!r})")

    def forward(self, inputs, states):
        return self.base_cell(inputs, states)


class VariationalDropoutCell(ModifierCell):
    """Variational dropout on inputs/states/outputs: identity at inference."""

    def __init__(self, base_cell, drop_inputs=0.0, drop_states=0.0, drop_outputs=0.0):
        super().__init__(base_cell)
        self.drop_inputs, self.drop_states, self.drop_outputs = drop_inputs, drop_states, drop_outputs

    def forward(self, inputs, states):
        return self.base_cell(inputs, states)


class BidirectionalCell(HybridRecurrentCell):
    """Runs `l_cell` forward and `r_cell` backward over the sequence; outputs are concatenated."""

    def __init__(self, l_cell, r_cell):
        super().__init__()
        self.l_cell, self.r_cell = l_cell, r_cell

    def __repr__(self) -> str:
        return f"BidirectionalCell(forward={self.l_cell!r}, backward={self.r_cell!r})"

    def __call__(self, inputs, states):
        raise NotImplementedError("Bidirectional cannot be stepped. Please use unroll")

    def state_info(self, batch_size: int = 0) -> list[dict]:
        return self.l_cell.state_info(batch_size) + self.r_cell.state_info(batch_size)

    def begin_state(self, batch_size: int = 0, func=None, **kwargs) -> list:
        return (self.l_cell.begin_state(batch_size=batch_size, func=func, **kwargs)
                + self.r_cell.begin_state(batch_size=batch_size, func=func, **kwargs))

    def infer_shape(self, i, x=None, is_bidirect=False) -> None:
        self.l_cell.infer_shape(i, x, True)
        self.r_cell.infer_shape(i, x, True)

    def _reverse(self, steps: list, valid_length):
        if valid_length is None:
            return steps[::-1]
        stacked = invoke("stack", steps, {"axis": 0, "num_args": len(steps)})
        rev = invoke("SequenceReverse", [stacked, valid_length],
                     {"use_sequence_length": True, "axis": 0})
        return _split_time(rev, len(steps), 0)

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        self.reset()
        axis = layout.find("T")
        steps = _split_time(inputs, length, axis)
        if begin_state is None:
            begin_state = self.begin_state(_batch_size(inputs, layout))
        n_l = len(self.l_cell.state_info())
        l_out, l_states = self.l_cell.unroll(length, steps, begin_state[:n_l], layout, False,
                                             valid_length)
        r_out, r_states = self.r_cell.unroll(length, self._reverse(steps, valid_length),
                                             begin_state[n_l:], layout, False, valid_length)
        r_out = self._reverse(list(r_out), valid_length)
        outputs = [invoke("Concat", [lo, ro], {"dim": 1, "num_args": 2})
                   for lo, ro in zip(l_out, r_out)]
        if merge_outputs is None:             # MXNet: the outputs take the inputs' form
            merge_outputs = not isinstance(inputs, (list, tuple))
        if valid_length is not None:          # steps past each sequence's end are zeros
            merged = invoke("SequenceMask", [_merge_time(outputs, axis, True), valid_length],
                            {"use_sequence_length": True, "axis": axis})
            outputs = merged if merge_outputs else _split_time(merged, length, axis)
        elif merge_outputs:
            outputs = _merge_time(outputs, axis, True)
        return outputs, l_states + r_states


class LSTMPCell(_GatedCell):
    """LSTM whose recurrent state is a projection `r = W_hr h` of size `projection_size`;
    states `[r, c]`."""
    _gates = 4

    def __init__(self, hidden_size: int, projection_size: int, i2h_weight_initializer=None,
                 h2h_weight_initializer=None, h2r_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", input_size: int = 0):
        super().__init__(hidden_size, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, input_size)
        self._projection_size = projection_size
        self.h2h_weight = Parameter("h2h_weight", shape=(4 * hidden_size, projection_size),
                                    init=h2h_weight_initializer, allow_deferred_init=True)
        self.h2r_weight = Parameter("h2r_weight", shape=(projection_size, hidden_size),
                                    init=h2r_weight_initializer, allow_deferred_init=True)

    def _out_width(self) -> int:
        return self._projection_size

    def state_info(self, batch_size: int = 0) -> list[dict]:
        return [{"shape": (batch_size, self._projection_size), "__layout__": "NC"},
                {"shape": (batch_size, self._hidden_size), "__layout__": "NC"}]

    def _alias(self) -> str:
        return "lstmp"

    def forward(self, inputs, states):
        i2h, h2h = self._projections(inputs, states[0])
        i, f, g, o = invoke("SliceChannel", [i2h + h2h], {"num_outputs": 4, "axis": 1})
        next_c = _np.tanh(g) * invoke("sigmoid", [i]) + invoke("sigmoid", [f]) * states[1]
        hidden = invoke("sigmoid", [o]) * _np.tanh(next_c)
        next_r = invoke("FullyConnected", [hidden, self.h2r_weight.data()],
                        {"num_hidden": self._projection_size, "no_bias": True, "flatten": True})
        return next_r, [next_r, next_c]
