"""mx.io's data iterators (DataDesc, DataBatch, NDArrayIter) as MXNet defines them."""
from __future__ import annotations

import numpy as np
import pytest

import framework as mx
from framework.base import MXNetError


def _firsts(it) -> list[list[float]]:
    return [b.data[0].asnumpy()[:, 0].tolist() for b in it]


def test_data_desc_is_a_named_shape_with_dtype_and_layout():
    d = mx.io.DataDesc("data", (2, 3), layout="NTC")
    assert d == ("data", (2, 3)) and d.name == "data" and d.shape == (2, 3)
    assert d.dtype is np.float32 and d.layout == "NTC"
    assert mx.io.DataDesc.get_batch_axis("TNC") == 1
    assert mx.io.DataDesc.get_list([("a", (1,))], [("a", np.int32)])[0].dtype is np.int32


def test_ndarray_iter_pads_the_last_batch_from_the_start():
    it = mx.io.NDArrayIter(np.arange(10, dtype=np.float32).reshape(5, 2), batch_size=2)
    batches = list(it)
    assert [b.pad for b in batches] == [0, 0, 1]
    assert batches[-1].data[0].asnumpy()[:, 0].tolist() == [8.0, 0.0]
    assert it.provide_data[0].shape == (2, 2)


def test_ndarray_iter_discard_and_roll_over():
    x = np.arange(10, dtype=np.float32).reshape(5, 2)
    assert _firsts(mx.io.NDArrayIter(x, batch_size=2, last_batch_handle="discard")) == \
        [[0.0, 2.0], [4.0, 6.0]]
    it = mx.io.NDArrayIter(x, batch_size=2, last_batch_handle="roll_over")
    assert _firsts(it) == [[0.0, 2.0], [4.0, 6.0]]
    it.reset()      # the left-over example starts the next epoch
    assert _firsts(it) == [[8.0, 0.0], [2.0, 4.0], [6.0, 8.0]]


def test_ndarray_iter_names_and_labels():
    it = mx.io.NDArrayIter({"a": np.zeros((4, 1)), "b": np.ones((4, 2))}, np.arange(4),
                           batch_size=4)
    assert [d.name for d in it.provide_data] == ["a", "b"]
    assert it.provide_label[0].name == "softmax_label"
    b = next(it)
    assert isinstance(b, mx.io.DataBatch) and len(b.data) == 2
    assert b.label[0].asnumpy().tolist() == [0, 1, 2, 3]


def test_ndarray_iter_bad_arguments_are_named():
    with pytest.raises(MXNetError, match="last_batch_handle"):
        mx.io.NDArrayIter(np.zeros((2, 1)), last_batch_handle="wrap")
    with pytest.raises(MXNetError, match="examples"):
        mx.io.NDArrayIter([np.zeros((2, 1)), np.zeros((3, 1))])
