"""With the NumPy engine, Runner.load serves the `optimize_for(backend="hybridserve")` twin of the
graph when it matches the traced graph (and only then), inspection keeps reporting the traced
graph's own nodes, and buffer sets are warmed for every inference thread (the onnxruntime engine:
test_runner_engine.py)."""
from __future__ import annotations

import logging

import numpy as np
import pytest

import mini_resnet
from service.runtime import compiled
from service.repository.config import DynamicBatching
from service.runtime.runner import Runner
from service.runtime.registry import load_limits
from service.settings import Settings

_io = mini_resnet.io


def _load(batching: DynamicBatching | None = None, **kw) -> Runner:
    return mini_resnet.load(batching, **{"engine": "numpy", **kw})


def _traced(r: Runner, x: np.ndarray) -> list[np.ndarray]:
    return r.run_hooked([x], lambda *_: None)


def _served_ops(r: Runner) -> set[str]:
    return {st.node.opname for st in r._served.op.fast.steps}


def test_serves_the_optimised_graph_within_tolerance():
    r = _load()
    x, mxnet_out = _io()
    assert r.optimised
    assert "BatchNorm" not in _served_ops(r)       # folded into the convolutions
    y = r.run([x])[0]
    np.testing.assert_allclose(y, _traced(r, x)[0], rtol=compiled.RTOL, atol=compiled.ATOL)
    np.testing.assert_allclose(y, mxnet_out, rtol=1e-4, atol=1e-5)


def test_inspection_reports_every_node_of_the_traced_graph():
    r = _load()
    x, _ = _io()
    seen: list[tuple[str, str]] = []
    r.run_hooked([x], lambda name, op, _arr: seen.append((name, op)))
    want = [(n.output_name(i), n.opname) for n in r.symbol.topo() if not n.is_var
            for i in range(n.num_visible())]
    assert seen == want
    assert sum(op == "BatchNorm" for _, op in seen) == 11


def test_optimize_off_serves_the_traced_graph_bit_for_bit():
    r = _load(optimize=False)
    x, _ = _io()
    assert not r.optimised and "BatchNorm" in _served_ops(r)
    np.testing.assert_array_equal(r.run([x])[0], _traced(r, x)[0])


def test_a_twin_that_disagrees_is_not_served(monkeypatch, caplog):
    from framework.symbol import backends   # the optimize_for table

    def off_by_a_bit(sym, args=None, aux=None, **_):
        return sym, {k: v * np.float32(1.01) for k, v in (args or {}).items()}, dict(aux or {})
    monkeypatch.setitem(backends._BACKENDS, "test_off_by_a_bit", off_by_a_bit)
    monkeypatch.setattr(compiled, "BACKEND", "test_off_by_a_bit")
    with caplog.at_level(logging.WARNING, logger="hybridserve.compiled"):
        r = _load()
    assert not r.optimised
    assert "differs from the traced graph" in caplog.text
    x, _ = _io()
    np.testing.assert_array_equal(r.run([x])[0], _load(optimize=False).run([x])[0])


def test_a_twin_that_fails_to_build_is_not_served(monkeypatch, caplog):
    monkeypatch.setattr(compiled, "BACKEND", "no_such_backend")
    with caplog.at_level(logging.WARNING, logger="hybridserve.compiled"):
        r = _load()
    assert not r.optimised and "graph optimisation failed" in caplog.text
    x, mxnet_out = _io()
    np.testing.assert_allclose(r.run([x])[0], mxnet_out, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("sets", [1, 3])
def test_buffer_sets_are_warmed_for_each_inference_thread(sets):
    r = _load(buffer_sets=sets)
    idle = r._served.op.idle_sets()
    # batch 1 (the only warm size without dynamic batching), `sets` sets ready: no request
    # thread plans buffers, however many run at once
    assert {sig[0][0]: n for sig, n in idle.items()} == {1: sets}
    assert r._plain.op.idle_sets() == {}            # the traced op keeps no buffers


def test_every_warm_batch_size_is_served_optimised_and_warmed():
    r = _load(DynamicBatching(preferred_batch_size=[2, 4]), buffer_sets=2)
    assert r.optimised
    assert {sig[0][0]: n for sig, n in r._served.op.idle_sets().items()} == {1: 2, 2: 2, 4: 2}
    x = np.random.default_rng(1).standard_normal((4, 3, 16, 16)).astype(np.float32)
    np.testing.assert_allclose(r.run([x])[0], _traced(r, x)[0], rtol=compiled.RTOL,
                               atol=compiled.ATOL)


def test_registry_loads_with_the_settings_policy():
    kw = load_limits(Settings(inference_threads=3, optimize_graphs=False, engine="numpy"))
    assert kw["buffer_sets"] == 3 and kw["optimize"] is False and kw["engine"] == "numpy"
    kw = load_limits(Settings(inference_threads=2))
    assert kw["optimize"] is True and kw["engine"] == "onnxruntime"
