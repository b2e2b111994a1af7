"""The fused RNN op (LSTM / GRU / RNN; 1-2 layers; bidirectional; given or zero initial state;
sequence lengths) in ONNX Runtime equals the NumPy kernel, at two batch sizes."""
import numpy as np
import pytest

from framework.compiler import Plan
from framework.onnx import lower_symbol
from framework.ops.nn.rnn import param_size
from framework.ops.registry import get_op
from framework.symbol.graph import Node, Symbol

from onnx_util import assert_close, session

CASES = [("lstm", 1, False, True), ("lstm", 2, True, False), ("lstm", 2, False, True),
         ("gru", 1, True, True), ("gru", 2, False, False), ("rnn_tanh", 2, True, True),
         ("rnn_relu", 1, False, False)]
T, I, H = 5, 3, 4


def _rnn_graph(mode, layers, bidir, given_state, use_len=False, batch_major=False):
    attrs = {"mode": mode, "num_layers": str(layers), "bidirectional": str(bidir),
             "state_size": str(H), "state_outputs": "True", "use_sequence_length": str(use_len)}
    D = 2 if bidir else 1
    data = (Node("null", "data"), 0)
    if batch_major:                            # NTC data, swapped to the op's TNC
        data = (Node("SwapAxis", "swap", {"dim1": "0", "dim2": "1"}, [data]), 0)
    ins = [data, (Node("null", "params"), 0)]
    names = ["state"] + (["state_cell"] if mode == "lstm" else [])
    for n in names:
        src = Node("null", n) if given_state else \
            Node("_zeros", f"{n}_zeros", {"shape": str((layers * D, 0, H))})   # MXNet 1.x
        ins.append((src, 0))
    if use_len:
        ins.append((Node("null", "lengths"), 0))
    node = Node("RNN", "rnn0", attrs, ins)
    return Symbol([(node, i) for i in range(node.num_outputs())]), names


def _feed(sym, names, N, given_state, rng, layers, D, lengths=None):
    feed = {"data": rng.standard_normal((T, N, I)).astype(np.float32)}
    if given_state:
        for n in names:
            feed[n] = rng.standard_normal((layers * D, N, H)).astype(np.float32)
    if lengths is not None:
        feed["lengths"] = lengths
    return feed


def _numpy(sym, params, feed):
    names = sym.list_inputs()
    return Plan(sym, names).run([np.asarray({**params, **feed}[n]) for n in names])


@pytest.mark.parametrize("mode,layers,bidir,given_state", CASES)
def test_rnn_matches_numpy(mode, layers, bidir, given_state):
    rng = np.random.default_rng(layers + 3 * bidir)
    sym, names = _rnn_graph(mode, layers, bidir, given_state)
    a = get_op("RNN").parse_attrs(sym.outputs[0][0].attrs)
    params = {"params": (rng.standard_normal(param_size(a, I)) * 0.5).astype(np.float32)}
    D = 2 if bidir else 1
    feed = _feed(sym, names, 2, given_state, rng, layers, D)
    model = lower_symbol(sym, params, {k: v.shape for k, v in feed.items()},
                         dynamic_batch=False)
    kinds = {n.op_type for n in model.graph.node}
    assert {"lstm": "LSTM", "gru": "GRU"}.get(mode, "RNN") in kinds
    sess = session(model)
    assert_close(sess.run(None, feed), _numpy(sym, params, feed))


def test_zero_state_follows_the_runtime_batch():
    """MXNet 1.x begin states `_zeros((L, 0, H))`: the 0 is the batch, read at run time."""
    rng = np.random.default_rng(0)
    sym, names = _rnn_graph("lstm", 2, True, False, batch_major=True)
    a = get_op("RNN").parse_attrs(sym.outputs[0][0].attrs)
    params = {"params": (rng.standard_normal(param_size(a, I)) * 0.5).astype(np.float32)}
    sess = session(lower_symbol(sym, params, {"data": (2, T, I)}))     # lowered at batch 2
    zeros = [n for n in sym.topo() if n.opname == "_zeros"]
    assert zeros and all(0 in n.parsed.shape for n in zeros)     # the caller's graph untouched
    for n in (2, 5):
        feed = {"data": rng.standard_normal((n, T, I)).astype(np.float32)}
        assert_close(sess.run(None, feed), _numpy(sym, params, feed))


@pytest.mark.parametrize("mode", ["lstm", "gru"])
def test_sequence_lengths(mode):
    rng = np.random.default_rng(1)
    sym, names = _rnn_graph(mode, 1, True, True, use_len=True)
    a = get_op("RNN").parse_attrs(sym.outputs[0][0].attrs)
    params = {"params": (rng.standard_normal(param_size(a, I)) * 0.5).astype(np.float32)}
    feed = _feed(sym, names, 3, True, rng, 1, 2, np.array([5, 2, 3], np.float32))
    sess = session(lower_symbol(sym, params, {k: v.shape for k, v in feed.items()},
                                dynamic_batch=False))
    assert_close(sess.run(None, feed), _numpy(sym, params, feed))
