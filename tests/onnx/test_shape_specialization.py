"""Shape-specialized ONNX Runtime sessions (framework/onnx/specialize.py, runtime.py): a region
builds one session per non-batch input shape it is called with, keeps at most its cache's
capacity, admits a new shape into a full cache only when it is asked for more often than the
least recently used one is used, and runs the region's NumPy kernels for shapes without a
session (not admitted, being built, refused by ORT) — within the numerics bound throughout."""
from __future__ import annotations

import numpy as np
import pytest

import framework as mx
from fixture_util import FIXTURES
from framework.gluon import SymbolBlock
from framework.onnx.specialize import ShapeCache, default_capacity

OP = "_sg_onnxruntime"
MX1 = FIXTURES / "mxnet-1.9.1"


# -- the cache ----------------------------------------------------------------------------------
def test_cache_keeps_capacity_and_evicts_least_recently_used():
    c: ShapeCache[str] = ShapeCache(2)
    c.put("a", "A", 10)
    c.put("b", "B", 20)
    assert c.get("a") == "A"            # b is now the least recently used
    assert not c.admit("c")             # asked once, b used once since it was built: not yet
    assert c.admit("c")                 # asked twice: more wanted than b is used
    c.put("c", "C", 5)
    assert c.keys() == ["a", "c"] and c.get("b") is None and c.evictions == 1
    assert c.nbytes() == 15


def test_a_one_off_shape_does_not_evict_hot_ones():
    c: ShapeCache[str] = ShapeCache(2)
    c.put("a", "A")
    c.put("b", "B")
    for _ in range(5):
        c.get("a"), c.get("b")
    assert not c.admit("x")             # asked once, the coldest entry used 6 times
    assert c.keys() == ["a", "b"]
    for _ in range(5):
        assert not c.admit("x")
    assert c.admit("x")                 # asked 7 times: now more wanted than "a" was used


def test_counts_age_so_a_cold_shape_loses_its_claim():
    c: ShapeCache[str] = ShapeCache(1)
    c.put("a", "A")
    for _ in range(9):
        c.get("a")                      # 10 uses
    for _ in range(40):
        c.get("zzz")                    # 49 lookups: three agings (every 16 × capacity)
    assert c._entries["a"].uses == 1    # 10 → 5 → 2 → 1
    assert [c.admit("b") for _ in range(3)] == [False, True, True]      # not 11 asks


def test_capacity_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("HYBRIDSERVE_ORT_SHAPE_CACHE", "7")
    assert default_capacity() == 7
    monkeypatch.setenv("HYBRIDSERVE_ORT_SHAPE_CACHE", "many")
    assert default_capacity() == 4


# -- a region's sessions ------------------------------------------------------------------------
def _resnet(**opts):
    """mini ResNet v1 (MXNet 1.9.1 export, input 3×16×16) on ORT, its NumPy twin, its engine."""
    def imports():
        return SymbolBlock.imports(str(MX1 / "mini_resnet_v1-symbol.json"), ["data"],
                                   str(MX1 / "mini_resnet_v1-0000.params"))
    blk, ref = imports(), imports()
    ref.hybridize(backend="numpy")
    blk.optimize_for(mx.np.zeros((1, 3, 16, 16)), backend="onnxruntime", **opts)
    engines = [n.parsed["runner"] for n in blk._cached_graph[1].topo() if n.opname == OP]
    assert len(engines) == 1
    return blk, ref, engines[0]


def _x(*shape, seed=0):
    return mx.np.array(np.random.RandomState(seed).rand(*shape).astype(np.float32))


def _within_bound(got, want):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    assert got.shape == want.shape
    assert float(np.max(np.abs(got - want))) <= 1e-4 * max(1.0, float(np.max(np.abs(want))))


def test_each_image_size_gets_a_session_shared_by_every_batch_size():
    blk, ref, engine = _resnet()
    for shape in [(1, 3, 24, 24), (3, 3, 24, 24), (2, 3, 32, 20), (5, 3, 16, 16), (1, 3, 32, 20)]:
        x = _x(*shape)
        _within_bound(blk(x).asnumpy(), ref(x).asnumpy())
    assert sorted(engine.cache.keys()) == [((3, 16, 16),), ((3, 24, 24),), ((3, 32, 20),)]
    assert engine.fallback_calls == 0
    assert engine.session_bytes() == sum(e.nbytes for e in engine.cache._entries.values())


def test_a_full_cache_of_hot_shapes_runs_new_shapes_on_numpy():
    blk, ref, engine = _resnet(shape_cache=1)
    x = _x(2, 3, 16, 16)
    for _ in range(3):
        blk(x)
    y = _x(1, 3, 20, 20, seed=1)
    _within_bound(blk(y).asnumpy(), ref(y).asnumpy())
    assert engine.cache.keys() == [((3, 16, 16),)] and engine.fallback_calls == 1


def test_a_shape_being_built_elsewhere_runs_on_numpy_meanwhile():
    blk, ref, engine = _resnet()
    y = _x(1, 3, 20, 20)
    with engine._build_lock:            # another thread is building a session
        _within_bound(blk(y).asnumpy(), ref(y).asnumpy())
    assert engine.fallback_calls == 1 and len(engine.cache) == 1
    blk(y)
    assert len(engine.cache) == 2 and engine.fallback_calls == 1


def test_shapes_onnxruntime_refuses_run_on_numpy_without_retrying(monkeypatch):
    blk, ref, engine = _resnet()
    calls = []

    def refuse(shapes):
        calls.append(shapes)
        raise RuntimeError("no session for you")
    monkeypatch.setattr(engine, "_build", refuse)
    y = _x(1, 3, 20, 20)
    with pytest.warns(UserWarning, match="run on NumPy"):
        _within_bound(blk(y).asnumpy(), ref(y).asnumpy())
    _within_bound(blk(y).asnumpy(), ref(y).asnumpy())
    assert len(calls) == 1 and engine.fallback_calls == 2


def test_with_verification_a_session_that_disagrees_with_numpy_is_not_used(monkeypatch):
    blk, ref, engine = _resnet(verify_bound=1e-4)
    real = engine._build

    def off_by_one(shapes):
        sess, nbytes = real(shapes)
        run = sess.run
        sess.run = lambda names, feed: [o + 1 for o in run(names, feed)]
        return sess, nbytes
    good = _x(1, 3, 24, 24)
    _within_bound(blk(good).asnumpy(), ref(good).asnumpy())     # verified, kept
    assert ((3, 24, 24),) in engine.cache.keys() and engine.fallback_calls == 0
    monkeypatch.setattr(engine, "_build", off_by_one)
    y = _x(2, 3, 20, 20, seed=1)
    with pytest.warns(UserWarning, match="differ from the NumPy kernels"):
        _within_bound(blk(y).asnumpy(), ref(y).asnumpy())
    _within_bound(blk(y[:1]).asnumpy(), ref(y[:1]).asnumpy())    # no new attempt at batch 1
    assert ((3, 20, 20),) in engine.cache.keys() and engine.fallback_calls == 2


def test_threads_bringing_new_shapes_at_once_all_get_right_answers():
    import threading
    blk, ref, engine = _resnet()
    xs = [_x(b, 3, s, s, seed=k) for k, (b, s) in enumerate([(1, 20), (2, 24), (1, 28), (3, 20)])]
    want = [ref(x).asnumpy() for x in xs]
    errors: list = []

    def work(k):
        try:
            for _ in range(3):
                _within_bound(blk(xs[k]).asnumpy(), want[k])
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)
    threads = [threading.Thread(target=work, args=(k,)) for k in range(len(xs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(engine.cache) <= engine.cache.capacity
