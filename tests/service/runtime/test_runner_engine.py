"""The onnxruntime engine in the server: Runner.load serves the `optimize_for(backend=
"onnxruntime")` twin when it reproduces the NumPy reference (within 1e-4·max(1, max|ref|)),
falls back to NumPy (per region, or wholly) and says why in the metadata, and inspection still
runs the traced NumPy graph."""
from __future__ import annotations

import logging
import sys
import threading

import numpy as np
import pytest

import mini_resnet
from framework.onnx import partition
from framework.onnx.runtime import OrtSubgraph
from service.repository.config import DynamicBatching
from service.runtime import compiled
from service.runtime.runner import Runner

SUBGRAPH_OP = "_sg_onnxruntime"     # the op of an ONNX Runtime region (framework/ops/compiled/subgraph.py)

_io = mini_resnet.io


def _load(batching: DynamicBatching | None = None, **kw) -> Runner:
    return mini_resnet.load(batching, max_batch_size=8, **kw)


def _reference(r: Runner, x: np.ndarray) -> np.ndarray:
    """The traced NumPy graph's output (what inspection runs)."""
    return r.run_hooked([x], lambda *_: None)[0]


def _within_bound(got, want):
    assert compiled.within_bound([got], [want]) is None


def _served_ops(r: Runner) -> list[str]:
    return [st.node.opname for st in r._served.op.fast.steps]


def test_served_by_onnxruntime_by_default_and_answers_as_numpy():
    r = _load()
    x, mxnet_out = _io()
    meta = r.metadata(["1"])["parameters"]
    assert meta["engine"] == "onnxruntime" and "engine_fallback_reason" not in meta
    assert meta["onnxruntime_nodes"] == meta["graph_nodes"] > 30
    assert "CPUExecutionProvider" in meta["execution_providers"]
    assert set(_served_ops(r)) == {SUBGRAPH_OP}
    assert r.triton_config()["parameters"]["engine"] == {"string_value": "onnxruntime"}
    y = r.run([x])[0]
    _within_bound(y, _reference(r, x))
    _within_bound(y, mxnet_out)


def test_metadata_names_the_providers_the_sessions_took():
    """CUDA asked for where onnxruntime has no CUDA provider (or no GPU): ORT runs the sessions
    on the CPU, and the metadata says so rather than repeating the request."""
    import onnxruntime
    r = _load(ort=compiled.OrtOptions(("CUDAExecutionProvider", "CPUExecutionProvider")))
    got = r.metadata(["1"])["parameters"]["execution_providers"].split(",")
    assert got[-1] == "CPUExecutionProvider"
    if "CUDAExecutionProvider" not in onnxruntime.get_available_providers():
        assert got == ["CPUExecutionProvider"]
    x, _ = _io()
    _within_bound(r.run([x])[0], _reference(r, x))


def test_an_op_that_does_not_lower_stays_on_numpy_between_regions(monkeypatch):
    monkeypatch.setattr(partition, "lowerable", lambda n: n.opname != "Pooling")
    r = _load()
    ops = _served_ops(r)
    assert "Pooling" in ops and ops.count(SUBGRAPH_OP) >= 2
    meta = r.metadata(["1"])["parameters"]
    assert meta["engine"] == "onnxruntime"
    assert 0 < meta["onnxruntime_nodes"] < meta["graph_nodes"]
    x, mxnet_out = _io()
    _within_bound(r.run([x])[0], mxnet_out)


def test_a_graph_where_nothing_lowers_is_served_by_numpy(monkeypatch, caplog):
    monkeypatch.setattr(partition, "lowerable", lambda n: False)
    with caplog.at_level(logging.WARNING, logger="hybridserve.runner"):
        r = _load()
    assert r.engine.name == "numpy" and r.engine.graph == "optimized" and r.optimised
    assert "no node of the graph lowers" in r.metadata(["1"])["parameters"][
        "engine_fallback_reason"]
    assert "serving NumPy" in caplog.text
    x, mxnet_out = _io()
    _within_bound(r.run([x])[0], mxnet_out)


def test_a_failing_check_falls_back_and_says_so(monkeypatch, caplog):
    real = OrtSubgraph.__call__

    def off_by_a_bit(self, *inputs):
        out = real(self, *inputs)
        return out * np.float32(1.01) if isinstance(out, np.ndarray) else out
    monkeypatch.setattr(OrtSubgraph, "__call__", off_by_a_bit)
    with caplog.at_level(logging.WARNING, logger="hybridserve.runner"):
        r = _load()
    reason = r.metadata(["1"])["parameters"]["engine_fallback_reason"]
    assert r.engine.name == "numpy" and "differ from the NumPy reference" in reason
    assert "max|Δ|" in reason and reason in caplog.text
    assert r.triton_config()["parameters"]["engine"] == {"string_value": "numpy"}
    assert SUBGRAPH_OP not in _served_ops(r)
    x, mxnet_out = _io()
    _within_bound(r.run([x])[0], mxnet_out)


def test_a_failing_check_without_the_numpy_twin_serves_the_traced_graph(monkeypatch):
    monkeypatch.setattr(compiled, "ORT_BOUND", -1.0)        # nothing can pass
    r = _load(optimize=False)
    assert (r.engine.name, r.engine.graph) == ("numpy", "traced") and not r.optimised
    x, _ = _io()
    np.testing.assert_array_equal(r.run([x])[0], _reference(r, x))


def test_engine_numpy_does_not_use_onnxruntime():
    r = _load(engine="numpy")
    assert r.metadata(["1"])["parameters"] == {"engine": "numpy", "engine_graph": "optimized"}
    assert SUBGRAPH_OP not in _served_ops(r)


def test_without_onnxruntime_the_model_is_served_by_numpy(monkeypatch):
    monkeypatch.setitem(sys.modules, "onnxruntime", None)     # import fails
    r = _load()
    reason = r.metadata(["1"])["parameters"]["engine_fallback_reason"]
    assert r.engine.name == "numpy" and "'onnxruntime' package" in reason
    x, mxnet_out = _io()
    _within_bound(r.run([x])[0], mxnet_out)


def test_inspection_gives_every_node_of_the_original_graph_with_real_tensors():
    r = _load()
    assert r.engine.name == "onnxruntime"
    x, _ = _io()
    seen: list[tuple[str, str, np.ndarray]] = []
    r.run_hooked([x], lambda name, op, arr: seen.append((name, op, np.array(arr))))
    want = [(n.output_name(i), n.opname) for n in r.symbol.topo() if not n.is_var
            for i in range(n.num_visible())]
    assert [(n, op) for n, op, _ in seen] == want
    assert sum(op == "BatchNorm" for _, op, _ in seen) == 11
    assert all(np.abs(a).max() > 0 for _, op, a in seen if op == "Convolution")
    _within_bound(r.run([x])[0], seen[-1][2])          # the last node is the model's output


def test_batches_of_any_size_and_concurrent_requests():
    r = _load(DynamicBatching(preferred_batch_size=[2, 4]), buffer_sets=2)
    assert r.engine.name == "onnxruntime"
    rng = np.random.default_rng(3)
    xs = [rng.standard_normal((b, 3, 16, 16)).astype(np.float32) for b in (1, 3, 4, 8, 2, 5)]
    want = [_reference(r, x) for x in xs]
    got: dict[int, np.ndarray] = {}

    def worker(k: int) -> None:
        for _ in range(3):
            got[k] = r.run([xs[k]])[0]
    threads = [threading.Thread(target=worker, args=(k,)) for k in range(len(xs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k, w in enumerate(want):
        _within_bound(got[k], w)


def test_within_bound_scales_with_the_reference():
    ref = np.array([1000.0, -2.0], np.float32)
    assert compiled.within_bound([ref + np.float32(0.09)], [ref]) is None     # 0.09 ≤ 0.1
    assert "over the bound" in compiled.within_bound([ref + np.float32(0.2)], [ref])
    assert compiled.within_bound([np.float32([0.5])], [np.float32([0.50009])]) is None
    assert "over the bound" in compiled.within_bound([np.float32([0.5])], [np.float32([0.5002])])
    assert "NaN" in compiled.within_bound([np.float32([np.nan])], [np.float32([1.0])])
    assert "outputs" in compiled.within_bound([ref, ref], [ref])
    assert "differs" in compiled.within_bound([np.int64([1])], [np.int64([2])])


def test_an_inferred_flatten_input_of_another_rank_runs_numpy():
    """The session takes the (batch, units) input it was built for; the FullyConnected
    graph also takes (batch, c, h, w) with as many units, which then runs NumPy."""
    io = np.load(mini_resnet.MX1 / "fc_flatten-io.npz")
    r = Runner.load("fc", "1", mini_resnet.files("fc_flatten"), None)
    x = io["data"].astype(np.float32)
    assert r.engine.name == "onnxruntime" and x.ndim > len(r.inputs[0].shape)
    _within_bound(r.run([x])[0], io["output"])
    _within_bound(r.run([x.reshape(len(x), -1)])[0], io["output"])


def test_free_dims_beyond_the_batch_run_numpy_at_other_sizes():
    """Without a config the signature's spatial dims are free; the session knows the warm-up
    size only, so a request of another size runs the traced NumPy graph."""
    r = Runner.load(mini_resnet.NAME, "1", mini_resnet.files(), None)
    assert r.engine.name == "onnxruntime" and r.inputs[0].shape[2:] == (-1, -1)
    x, mxnet_out = _io()
    _within_bound(r.run([x])[0], mxnet_out)
