"""gluon.data: datasets, samplers, batchify functions and the DataLoader (MXNet 2.0 semantics)."""
import threading

import numpy as onp
import pytest

import framework as mx
from framework.gluon import data as gdata
from framework.gluon.data import batchify


# -- samplers ---------------------------------------------------------------------------------
def test_sequential_and_random_samplers():
    assert list(gdata.SequentialSampler(4, start=3)) == [3, 4, 5, 6]
    onp.random.seed(0)
    order = list(gdata.RandomSampler(20))
    assert sorted(order) == list(range(20)) and order != list(range(20))
    assert len(gdata.RandomSampler(7)) == 7


@pytest.mark.parametrize("mode,batches,length", [
    ("keep", [[0, 1, 2], [3, 4, 5], [6]], 3),
    ("discard", [[0, 1, 2], [3, 4, 5]], 2),
])
def test_batch_sampler_last_batch(mode, batches, length):
    bs = gdata.BatchSampler(gdata.SequentialSampler(7), 3, mode)
    assert list(bs) == batches and len(bs) == length


def test_batch_sampler_rollover_carries_the_tail_into_the_next_pass():
    bs = gdata.BatchSampler(gdata.SequentialSampler(5), 3, "rollover")
    assert list(bs) == [[0, 1, 2]]
    assert len(bs) == 2                       # 2 carried + 5 new = 7 → two full batches
    assert list(bs) == [[3, 4, 0], [1, 2, 3]]
    assert list(bs) == [[4, 0, 1], [2, 3, 4]]


def test_batch_sampler_rejects_unknown_mode():
    with pytest.raises(ValueError, match="last_batch"):
        gdata.BatchSampler(gdata.SequentialSampler(3), 2, "pad")


def test_interval_and_filter_samplers():
    assert list(gdata.IntervalSampler(7, 3)) == [0, 3, 6, 1, 4, 2, 5]
    assert list(gdata.IntervalSampler(7, 3, rollover=False)) == [0, 3, 6]
    assert len(gdata.IntervalSampler(7, 3, rollover=False)) == 3
    assert list(gdata.FilterSampler(lambda s: s > 10, [5, 20, 3, 11])) == [1, 3]


# -- datasets ---------------------------------------------------------------------------------
def test_array_dataset_zips_and_checks_lengths():
    ds = gdata.ArrayDataset(onp.arange(6).reshape(3, 2), [7, 8, 9])
    x, y = ds[1]
    assert x.tolist() == [2, 3] and y == 8 and len(ds) == 3
    assert gdata.ArrayDataset([4, 5])[1] == 5       # one array: the bare sample
    one_d = gdata.ArrayDataset(mx.np.array([1.5, 2.5]))
    assert isinstance(one_d[0], onp.floating)        # 1-D framework arrays index as NumPy
    with pytest.raises(ValueError, match="same length"):
        gdata.ArrayDataset([1, 2], [1, 2, 3])


def test_transform_and_transform_first():
    ds = gdata.ArrayDataset([1, 2, 3], [10, 20, 30])
    assert ds.transform(lambda x, y: x + y)[2] == 33
    assert ds.transform_first(lambda x: -x)[0] == (-1, 10)
    calls = []
    eager = gdata.SimpleDataset([1, 2]).transform(lambda x: calls.append(x) or x * 2, lazy=False)
    assert calls == [1, 2] and list(eager) == [2, 4]
    assert isinstance(eager, gdata.SimpleDataset)


def test_filter_applies_to_transformed_samples():
    ds = gdata.SimpleDataset(list(range(30))).transform(lambda x: x + 1).filter(lambda x: x % 10 == 0)
    assert list(ds) == [10, 20, 30]


def test_shard_splits_contiguously_with_the_remainder_first():
    ds = gdata.SimpleDataset(list(range(10)))
    shards = [list(ds.shard(4, i)) for i in range(4)]
    assert shards == [[0, 1, 2], [3, 4, 5], [6, 7], [8, 9]]
    with pytest.raises(ValueError):
        ds.shard(4, 4)


def test_take_and_sample():
    ds = gdata.SimpleDataset(list("abcdef"))
    assert list(ds.take(2)) == ["a", "b"] and len(ds.take(None)) == 6 and len(ds.take(100)) == 6
    assert list(ds.sample(gdata.IntervalSampler(6, 2))) == list("acebdf")
    with pytest.raises(TypeError, match="Sampler"):
        ds.sample([0, 1])


def test_mx_handle_is_the_object_itself():
    ds = gdata.SimpleDataset(onp.arange(5)).take(3)
    assert ds.__mx_handle__() is ds
    stack = batchify.Stack()
    assert stack.__mx_handle__() is stack


# -- batchify ---------------------------------------------------------------------------------
def test_stack_keeps_dtype_and_recurses_into_fields():
    out = batchify.Stack()([onp.array([1, 2], dtype=onp.int32), onp.array([3, 4], dtype=onp.int32)])
    assert isinstance(out, mx.np.ndarray) and out.dtype == onp.int32
    assert out.asnumpy().tolist() == [[1, 2], [3, 4]]
    x, y = batchify.Stack()([(mx.np.ones((2,)), 0), (mx.np.zeros((2,)), 1)])
    assert x.shape == (2, 2) and y.asnumpy().tolist() == [0, 1]


def test_pad_pads_every_axis_and_rounds():
    out = batchify.Pad(val=-1)([onp.array([[1, 2, 3]]), onp.array([[4], [5]])])
    assert out.asnumpy().tolist() == [[[1, 2, 3], [-1, -1, -1]], [[4, -1, -1], [5, -1, -1]]]
    out = batchify.Pad(round_to=4, dtype="float32")([[1, 2], [3, 4, 5]])
    assert out.shape == (2, 4) and out.dtype == onp.float32
    with pytest.raises(NotImplementedError, match="Group"):
        batchify.Pad()([(onp.ones(2), 1)])


def test_group_append_aslist():
    data = [(onp.ones(2), [1, 2, 3]), (onp.zeros(2), [4])]
    x, y = batchify.Group(batchify.Stack(), batchify.Pad())(data)
    assert x.shape == (2, 2) and y.asnumpy().tolist() == [[1, 2, 3], [4, 0, 0]]
    assert batchify.Group([batchify.AsList(), batchify.AsList()])(data)[1] == [[1, 2, 3], [4]]
    with pytest.raises(ValueError, match="fields"):
        batchify.Group(batchify.Stack())(data)
    parts = batchify.Append()([onp.ones(3), onp.ones(1)])
    assert [p.shape for p in parts] == [(1, 3), (1, 1)]


# -- DataLoader -------------------------------------------------------------------------------
def _loader_batches(**kw):
    ds = gdata.ArrayDataset(onp.arange(10, dtype=onp.float32).reshape(10, 1), onp.arange(10))
    return [(x.asnumpy().ravel().tolist(), y.asnumpy().tolist()) for x, y in gdata.DataLoader(ds, **kw)]


@pytest.mark.parametrize("workers", [0, 3])
def test_loader_batches_in_order_with_or_without_workers(workers):
    batches = _loader_batches(batch_size=4, num_workers=workers)
    assert [b[1] for b in batches] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert _loader_batches(batch_size=4, num_workers=workers, last_batch="discard")[-1][1] == [4, 5, 6, 7]


def test_loader_shuffle_covers_everything_once():
    onp.random.seed(3)
    labels = sum((b[1] for b in _loader_batches(batch_size=3, shuffle=True)), [])
    assert sorted(labels) == list(range(10)) and labels != list(range(10))


def test_loader_argument_errors():
    ds = gdata.SimpleDataset(list(range(4)))
    with pytest.raises(ValueError, match="batch_size"):
        gdata.DataLoader(ds)
    with pytest.raises(ValueError, match="shuffle"):
        gdata.DataLoader(ds, 2, shuffle=True, sampler=gdata.SequentialSampler(4))
    with pytest.raises(ValueError, match="batch_sampler"):
        gdata.DataLoader(ds, 2, batch_sampler=gdata.BatchSampler(gdata.SequentialSampler(4), 2))


def test_loader_batch_sampler_and_batchify_fn():
    ds = gdata.SimpleDataset(list(range(6)))
    dl = gdata.DataLoader(ds, batch_sampler=gdata.BatchSampler(gdata.IntervalSampler(6, 2), 3),
                          batchify_fn=list)
    assert list(dl) == [[0, 2, 4], [1, 3, 5]] and len(dl) == 2


def test_workers_run_on_other_threads_and_a_slow_batch_times_out():
    seen = set()

    def slow(samples):
        seen.add(threading.get_ident())
        threading.Event().wait(0.3 if samples == [5] else 0)
        return samples

    dl = gdata.DataLoader(gdata.SimpleDataset(list(range(6))), 1, batchify_fn=slow,
                          num_workers=2, timeout=0.05)
    with pytest.raises(RuntimeError, match="timeout"):
        list(dl)
    assert threading.get_ident() not in seen
