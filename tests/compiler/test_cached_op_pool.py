"""Static-alloc buffer sets are pooled per signature, not per thread: a set planned in one
thread (a server's warm-up) serves calls from any other, `reserve` pre-builds sets for
concurrent callers, and the first call at new shapes runs the graph only once."""
import threading

import numpy as np

from fixture_util import load_fixture
from framework.compiler import CachedOp, Plan
from concurrency import run_in_threads


def _op(name="mini_resnet_v1"):
    sym, params, inputs, _ = load_fixture("mxnet-1.9.1", name)
    names = sym.list_inputs()
    feed = {**params, **inputs}
    args = [np.asarray(feed[n]) for n in names]
    op = CachedOp(sym, names, {"static_alloc": True, "static_shape": True,
                               "data_indices": [names.index("data")]})
    return op, args, Plan(sym, names).run(args)


def _no_more_planning(monkeypatch, op):
    def refuse(*_a, **_k):
        raise AssertionError("planned a new buffer set")
    monkeypatch.setattr(op.fast, "specialize", refuse)
    monkeypatch.setattr(op.fast, "specialize_run", refuse)


def test_a_set_planned_in_one_thread_serves_another(monkeypatch):
    op, args, want = _op()
    op(args)                                       # plans the set here (the "warm-up")
    _no_more_planning(monkeypatch, op)
    got, errors = [], []

    def call():
        try:
            got.append(op(args)[0])
        except Exception as e:  # noqa: BLE001
            errors.append(e)
    t = threading.Thread(target=call)
    t.start()
    t.join()
    assert not errors
    np.testing.assert_array_equal(got[0], want[0])


def test_reserve_prebuilds_sets_for_concurrent_callers(monkeypatch):
    op, args, want = _op()
    op.reserve(args, 3)
    assert list(op.idle_sets().values()) == [3]
    _no_more_planning(monkeypatch, op)
    results = [None] * 3

    def call(k):
        results[k] = op(args)[0].copy()
    assert not run_in_threads(call, 3)
    for r in results:
        np.testing.assert_array_equal(r, want[0])
    assert list(op.idle_sets().values()) == [3]     # every set came back


def test_first_call_at_new_shapes_runs_the_graph_once():
    op, args, want = _op()
    calls = []
    step = op.fast.steps[0]
    inner = step.fn
    step.fn = lambda *a, **k: (calls.append(1), inner(*a, **k))[1]
    first = op(args)
    assert len(calls) == 1                          # the planning run's outputs were returned
    second = op(args)
    assert len(calls) == 2
    np.testing.assert_array_equal(first[0], want[0])
    np.testing.assert_array_equal(second[0], want[0])


def test_clear_buffers_drops_idle_sets_and_calls_still_work():
    op, args, want = _op()
    op.reserve(args, 2)
    op.clear_buffers()
    assert op.idle_sets() == {}
    np.testing.assert_array_equal(op(args)[0], want[0])
    assert list(op.idle_sets().values()) == [1]
