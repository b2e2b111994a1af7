"""`framework._deferred_compute` (MXNet's `mx._deferred_compute`): bind arrays to variables,
record inside `context()`, read the graph back and run it."""
from __future__ import annotations

import numpy as onp
import pytest

import framework as mx
import framework._deferred_compute as dc
from framework import np


def test_recorded_graph_reproduces_the_computation():
    a = np.arange(6).reshape(2, 3).astype("float32")
    dc.set_variable(a, mx.sym.var("a"))
    with dc.context():
        assert dc.is_deferred_compute()
        b = np.tanh(a * 2) + 1
    assert not dc.is_deferred_compute()
    sym = dc.get_symbol(b)
    assert sym.list_inputs() == ["a"]
    assert dc.get_symbol(b).list_inputs() == ["a"]          # reading it twice is fine
    out = sym._bind(args={"a": np.ones((2, 3))}).forward()[0].asnumpy()
    onp.testing.assert_allclose(out, onp.tanh(onp.full((2, 3), 2.0)) + 1, rtol=1e-6)


def test_set_variable_twice_is_an_error():
    a = np.zeros((2,))
    dc.set_variable(a, mx.sym.var("a"))
    with pytest.raises(mx.MXNetError):
        dc.set_variable(a, mx.sym.var("b"))


def test_unbound_array_cannot_be_read():
    with dc.context():
        c = np.ones((2,)) + 0     # created inside: an op result, recorded
    assert dc.get_symbol(c).list_inputs() == []
    with pytest.raises(mx.MXNetError):
        dc.get_symbol(onp.zeros(2))
