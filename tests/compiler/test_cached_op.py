"""The compiled cached op: plans, static allocation by liveness, threads, hooks, unknown dims."""

import numpy as np
import pytest

from fixture_util import VERSIONS, fixture_names, load_fixture
from framework.base import ShapeError
from framework.compiler import CachedOp, Plan
from concurrency import run_in_threads

ALL = [(v, n) for v in VERSIONS for n in fixture_names(v)]


def _feed(version, name):
    sym, params, inputs, expected = load_fixture(version, name)
    names = sym.list_inputs()
    feed = {**params, **inputs}
    return sym, names, [np.asarray(feed[n]) for n in names], expected


@pytest.mark.parametrize("version,name", ALL)
def test_static_alloc_matches_plain_run_on_every_fixture(version, name):
    sym, names, args, expected = _feed(version, name)
    plain = Plan(sym, names).run(args)
    op = CachedOp(sym, names, {"static_alloc": True, "static_shape": True})
    first = [o.copy() for o in op(args)]
    second = op(args)                       # buffers reused: results must not change
    for p, a, b, e in zip(plain, first, second, expected):
        np.testing.assert_array_equal(a, p)
        np.testing.assert_array_equal(b, p)
        np.testing.assert_allclose(p, e, rtol=1e-4, atol=1e-5)


def test_memory_plan_reuses_buffers_by_liveness():
    sym, names, args, _ = _feed("mxnet-1.9.1", "mini_resnet_v1_bottleneck")
    op = CachedOp(sym, names, {"static_alloc": True})
    _, _, mem = op.fast.specialize_plan(args)
    assert mem.n_buffers > 0
    assert mem.planned_bytes < mem.naive_bytes        # reuse happened
    assert mem.inplace_steps                          # relu ran in place


def test_specialisations_own_their_buffers():
    """The memory plan is local to each specialisation: two of one signature (two threads
    compiling at once) never share a buffer, and the shared Plan keeps none of them."""
    sym, names, args, _ = _feed("mxnet-1.9.1", "mini_resnet_v1_bottleneck")
    plan = Plan(sym, names)
    _, _, a = plan.specialize_plan(args)
    _, _, b = plan.specialize_plan(args)
    assert a.buffers and b.buffers
    assert not any(np.shares_memory(x, y) for x in a.buffers.values() for y in b.buffers.values())
    assert not any(isinstance(v, type(a)) for v in vars(plan).values())


def test_outputs_are_not_overwritten_by_the_next_call():
    sym, names, args, _ = _feed("mxnet-2.0.0b1", "lenet")
    op = CachedOp(sym, names, {"static_alloc": True})
    out1 = op(args)[0]
    keep = out1.copy()
    args2 = list(args)
    args2[names.index("data")] = args[names.index("data")] * 2
    op(args2)
    np.testing.assert_array_equal(out1, keep)


def test_concurrent_calls_from_many_threads_agree():
    sym, names, args, _ = _feed("mxnet-1.9.1", "mini_mobilenet_v2")
    op = CachedOp(sym, names, {"static_alloc": True, "static_shape": True})
    di = names.index("data")
    inputs = []
    for k in range(8):
        a = list(args)
        a[di] = args[di] * (1 + 0.1 * k)
        inputs.append(a)
    serial = [Plan(sym, names).run(a)[0] for a in inputs]
    results = [None] * 8

    def work(k):
        for _ in range(5):
            r = op(inputs[k])[0].copy()
            assert results[k] is None or np.array_equal(results[k], r)
            results[k] = r
    assert not run_in_threads(work, 8, start_together=False)
    for r, s in zip(results, serial):
        np.testing.assert_array_equal(r, s)


def test_new_input_shape_gets_a_new_specialisation():
    sym, names, args, _ = _feed("mxnet-2.0.0b1", "mlp3_sequential")
    op = CachedOp(sym, names, {"static_alloc": True, "static_shape": True, "data_indices": [0]})
    di = names.index("data")
    op(args)
    bigger = list(args)
    bigger[di] = np.concatenate([args[di]] * 3)
    out = op(bigger)[0]
    assert out.shape[0] == 3 * args[di].shape[0]
    assert len(op.signatures) == 2


def test_failing_node_is_named():
    sym, names, args, _ = _feed("mxnet-2.0.0b1", "mlp3_sequential")
    di = names.index("data")
    bad = list(args)
    bad[di] = np.ones((4, 7), np.float32)
    with pytest.raises(ShapeError) as e:
        Plan(sym, names).run(bad)
    assert "FullyConnected" in str(e.value) and "node_" in str(e.value)


def test_hooked_run_reports_every_op_output_and_inputs_with_monitor_all():
    sym, names, args, expected = _feed("mxnet-2.0.0b1", "mlp3_sequential")
    seen = []
    out = Plan(sym, names).run_hooked(args, lambda n, op, a: seen.append((n, op, a.shape)))
    np.testing.assert_allclose(out[0], expected[0], rtol=1e-4, atol=1e-5)
    ops = [n for n in sym.topo() if not n.is_var]
    assert [s[0] for s in seen] == [f"{n.name}_output" for n in ops]
    seen_all = []
    Plan(sym, names).run_hooked(args, lambda n, op, a: seen_all.append(n), monitor_all=True)
    first = ops[0]
    assert seen_all[:4] == [f"{first.name}_data", f"{first.name}_weight", f"{first.name}_bias",
                            f"{first.name}_output"]


def test_legacy_zero_dims_are_resolved_per_signature():
    # 1.x begin states `_zeros(shape=(0, H))` get the batch size from the data
    sym, names, args, expected = _feed("mxnet-1.9.1", "lstm_gru_cells_unrolled")
    out = Plan(sym, names).run(args)
    for o, e in zip(out, expected):
        np.testing.assert_allclose(o, e, rtol=1e-4, atol=1e-5)
