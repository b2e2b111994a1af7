"""Graph facts computed once: loading a model, its summary, its signature, its limits and the
console's graph all read one analysis per input signature (service/runtime/analysis.py)."""
from __future__ import annotations

from pathlib import Path

import mini_resnet
import service.runtime.analysis as analysis
from service.runtime.graphview import graph_view

SERVICE = Path(__file__).resolve().parents[3] / "service"


def test_one_shape_inference_per_signature(monkeypatch):
    seen: list[tuple] = []
    real = analysis.infer_shapes

    def counting(sym, known, **kw):
        seen.append(tuple(sorted((k, tuple(v)) for k, v in known.items() if k == "data")))
        return real(sym, known, **kw)

    monkeypatch.setattr(analysis, "infer_shapes", counting)
    r = mini_resnet.load()                    # signature, limits, FLOPs per item
    s = r.summary(1)
    g = graph_view(r)
    assert graph_view(r) is g                 # built once per loaded version
    assert len(seen) == len(set(seen)) == r.facts.runs     # no signature inferred twice
    assert {k[0][1] for k in seen} == {(1, 3, 16, 16), (2, 3, 16, 16)}
    # the summary, the graph and the batcher's inline rule agree: one FLOP estimate
    assert s["flops_complete"] and s["flops"] == r.flops_per_item
    assert s["flops"] == sum(n["flops"] or 0 for n in g["nodes"])
    assert s["total_params"] == g["total_params"] > 0


def test_no_other_service_module_runs_shape_inference():
    users = sorted(str(p.relative_to(SERVICE)) for p in SERVICE.rglob("*.py")
                   if "infer_shapes" in p.read_text() or "infer_dtypes" in p.read_text())
    assert users == ["runtime/analysis.py"]
