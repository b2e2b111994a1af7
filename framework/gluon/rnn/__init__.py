"""Recurrent layers (`gluon.rnn`): fused RNN/LSTM/GRU layers and step cells."""
from .rnn_layer import GRU, LSTM, RNN  # noqa: F401
from .rnn_cell import (GRUCell, HybridRecurrentCell, HybridSequentialRNNCell, LSTMCell,  # noqa: F401
                       RecurrentCell, RNNCell, SequentialRNNCell)
from .modifier_cells import (BidirectionalCell, DropoutCell, LSTMPCell, ModifierCell,  # noqa: F401
                             ResidualCell, VariationalDropoutCell, ZoneoutCell)
from .conv_cells import *  # noqa: F401,F403,E402
