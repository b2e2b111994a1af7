"""Graph facts computed once: loading a model, its summary, its signature, its limits and the
console's graph all read one analysis per input signature (service/runtime/analysis.py)."""
from __future__ import annotations

from pathlib import Path

import mini_resnet
import framework as mx
import service.runtime.analysis as analysis
from service.runtime.graphview import graph_view
from service.runtime.summary import render_text

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


def test_a_data_dependent_op_blanks_its_rows_instead_of_guessing():
    """nonzero's output length depends on the values: its row and what follows it read unknown
    (no FLOPs), the FullyConnected before it keeps its shape and FLOPs."""
    fc = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=5, name="fc")
    out = mx.sym.np.sum(mx.sym.npx.nonzero(fc) * 2)
    facts = analysis.GraphFacts(out, ["data"], {"fc_weight": (5, 4), "fc_bias": (5,)})
    t = facts.table({"data": (3, 4)})
    rows = {r["op"]: r for r in t["layers"]}
    assert rows["FullyConnected"]["output_shape"] == [3, 5] and rows["FullyConnected"]["flops"]
    assert [r["output_shape"] for r in t["layers"][1:]] == [None] * (len(t["layers"]) - 1)
    assert facts.output_shapes({"data": (3, 4)}) == [None]
    text = render_text({**t, "inputs": [{"shape": [3, 4]}], "batch_size": 3})
    assert "(3, 5)" in text and "?" in text
