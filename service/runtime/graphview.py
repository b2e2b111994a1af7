"""A loaded model's graph for drawing (the console's `GET …/graph`), from its graph facts.

One entry per op node and per data input (parameters fold into the op that reads them):
op, name, attrs as exported, inputs as `[node index, output index]`, output names (the names
op-hook inspection records use), output shapes, parameter tensors and their element count,
and FLOPs where the op has an estimate. Shapes come from the facts at the declared input
shapes with free dims probed at image-like sizes; a dim that moves with the free input dims is
-1. A node whose shape cannot be inferred keeps `null` instead of failing the whole graph.

Built once per loaded version (kept in the runner's facts).
"""
from __future__ import annotations

import math

from .analysis import GraphFacts, input_slot_names, node_flops

# (batch, other free dims) per probe: image-sized, so deep strided nets still resolve
_PROBES = ((1, 224), (2, 256), (1, 299))   # 299: Inception-style nets whose last pool is 8x8


def _merge(probes: list[tuple | None]) -> list[int] | None:
    got = [p for p in probes if p is not None]
    if not got or any(len(p) != len(got[0]) for p in got):
        return None
    return [-1 if len({p[d] for p in got}) > 1 else int(got[0][d]) for d in range(len(got[0]))]


def _probe(facts: GraphFacts, declared: dict[str, tuple]) -> list[dict]:
    """Shapes at each probe's sizes for the free dims (one probe when the declared shapes have
    none)."""
    probes = []
    for k, (b, free) in enumerate(_PROBES):
        if k and not any(-1 in s for s in declared.values()):
            break                   # no free dims: one probe is exact
        probes.append(facts.shapes({n: tuple((b if i == 0 else free) if d == -1 else d
                                             for i, d in enumerate(s))
                                    for n, s in declared.items()}))
    return probes


def _input_node(n, spec, nid: int) -> dict:
    return {"id": nid, "name": n.name, "op": "input", "kind": "input",
            "attrs": dict(n.attrs), "inputs": [], "outputs": [n.name],
            "output_shapes": [list(spec.shape) if spec.shape is not None else None],
            "datatype": spec.datatype, "params": 0, "param_tensors": [], "flops": None}


def _param_tensor(src, i: int, slot: str, probes: list[dict], facts: GraphFacts,
                  seen: set) -> dict:
    shp = facts.param_shapes.get(src.name)
    if shp is None:
        shp = next((p.get((id(src), i)) for p in probes if p.get((id(src), i))), None)
    size = int(math.prod(shp)) if shp is not None else 0
    t = {"name": src.name, "slot": slot, "shape": list(shp) if shp is not None else None,
         "size": size, "auxiliary": src.name in facts.aux_names, "shared": src.name in seen}
    seen.add(src.name)
    return t


def _flops(n, probe: dict) -> int | None:
    """The op's FLOPs at the first probe's shapes, when the op and every shape are known."""
    return node_flops(n, [probe.get((id(s), i)) for s, i in n.inputs],
                      [probe.get((id(n), i)) for i in range(n.num_outputs())])


def _shape_reader(probes: list[dict], free_batch: bool):
    def shape_of(node, i: int) -> list[int] | None:
        got = [(b, p.get((id(node), i))) for (b, _), p in zip(_PROBES, probes)]
        merged = _merge([shp for _, shp in got])
        batches = {b for b, shp in got if shp is not None}
        if merged and free_batch and len(batches) == 1 and merged[0] == batches.pop():
            merged[0] = -1          # only one batch size resolved: dim 0 is still the batch
        return merged
    return shape_of


def _nodes(runner, probes: list[dict]) -> tuple[list[dict], dict[int, int]]:
    """One record per data input and op, in topological order, and node → record index."""
    facts, sym = runner.facts, runner.symbol
    data = {s.name: s for s in runner.inputs}
    declared = {s.name: s.shape for s in runner.inputs if s.shape is not None}
    seen: set = set()
    # FLOPs only where they are well defined: batch 1 with every other dim fixed
    flops_ok = all(-1 not in s[1:] for s in declared.values()) and len(declared) == len(data)
    shape_of = _shape_reader(probes, any(s and s[0] == -1 for s in declared.values()))
    nodes: list[dict] = []
    index: dict[int, int] = {}
    for n in sym.topo():
        if n.is_var:
            if n.name in data:
                index[id(n)] = len(nodes)
                nodes.append(_input_node(n, data[n.name], len(nodes)))
            continue
        slots = input_slot_names(n)
        inputs, ptensors = [], []
        for k, (src, i) in enumerate(n.inputs):
            if src.is_var and src.name not in data:
                ptensors.append(_param_tensor(src, i, slots[k] if k < len(slots) else str(k),
                                              probes, facts, seen))
            elif id(src) in index:
                inputs.append([index[id(src)], i])
        nvis = n.num_visible()
        index[id(n)] = len(nodes)
        nodes.append({"id": len(nodes), "name": n.name, "op": n.opname, "kind": "op",
                      "attrs": dict(n.attrs), "inputs": inputs,
                      "outputs": [n.output_name(i) for i in range(nvis)],
                      "output_shapes": [shape_of(n, i) for i in range(nvis)],
                      "params": sum(t["size"] for t in ptensors), "param_tensors": ptensors,
                      "flops": _flops(n, probes[0]) if flops_ok else None})
    return nodes, index


def _build(runner) -> dict:
    sym = runner.symbol
    declared = {s.name: s.shape for s in runner.inputs if s.shape is not None}
    nodes, index = _nodes(runner, _probe(runner.facts, declared))
    heads = []
    for spec, (n, i) in zip(runner.outputs, sym.outputs):
        if id(n) in index:
            heads.append({"name": spec.name, "node": index[id(n)], "index": i,
                          "datatype": spec.datatype,
                          "shape": list(spec.shape) if spec.shape is not None else None})
    return {"name": runner.name, "version": runner.version,
            "nodes": nodes, "heads": heads, "total_params": sum(x["params"] for x in nodes),
            "op_count": sum(1 for x in nodes if x["kind"] == "op"),
            "inputs": [s.public() for s in runner.inputs],
            "outputs": [s.public() for s in runner.outputs]}


def graph_view(runner) -> dict:
    """The drawing document of a loaded runner (built on first use, then kept)."""
    doc = runner.facts.memo.get("graph")
    if doc is None:
        doc = runner.facts.memo["graph"] = _build(runner)
    return doc


def graph_view_ready(runner) -> dict | None:
    """The document when it was built already (no work on the caller's thread)."""
    return runner.facts.memo.get("graph")
