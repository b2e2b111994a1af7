"""Real-MXNet fixture models whose ops are all tensor ops (elemwise, binary, reduce, shape,
indexing, creation, linalg, sorting, sequence), run through the graph compiler."""
import numpy as np
import pytest

from fixture_util import run_fixture

MX1 = ["broadcast_ops", "elementwise", "expand_squeeze", "misc_ops", "reduce_ops",
       "reshape_codes", "rounding", "scalar_ops", "sequence_ops", "slicing",
       "transpose_concat_stack", "unary_math", "where_dot"]
MX2 = ["np_arith", "np_shape", "np_matmul", "np_reduce_softmax"]


def _check(version, name):
    outs, expected = run_fixture(version, name)
    assert len(outs) == len(expected)
    for i, (o, e) in enumerate(zip(outs, expected)):
        assert o.shape == e.shape, f"{name} output {i}: shape {o.shape} != {e.shape}"
        np.testing.assert_allclose(o, e, rtol=1e-4, atol=1e-5, err_msg=f"{name} output {i}")


@pytest.mark.parametrize("name", MX1)
def test_mxnet1_fixture(name):
    _check("mxnet-1.9.1", name)


@pytest.mark.parametrize("name", MX2)
def test_mxnet2_fixture(name):
    _check("mxnet-2.0.0b1", name)
