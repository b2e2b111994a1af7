"""Partitioning into subgraph regions: convex, connected, maximal; contraction keeps the graph's
meaning and `expand` gives the original graph back (no ONNX Runtime needed here: the region
nodes run their region on the NumPy plan)."""
import random

import numpy as np
import pytest

from framework.compiler import Plan
from framework.compiler.passes.partition import contract, expand, find_groups
from framework.ops.attrs import Attrs
from framework.ops.registry import get_op
from framework.symbol.graph import Node, Symbol

UNARY = ["relu", "sigmoid", "tanh"]
BINARY = ["elemwise_add", "elemwise_mul"]


class _NumpyEngine:
    """A region engine that runs the region with the NumPy plan (what ORT stands in for)."""

    def __init__(self, symbol):
        self.symbol = symbol
        self.plan = Plan(symbol, symbol.list_inputs())
        self.calls = 0

    def __call__(self, *inputs):
        self.calls += 1
        outs = self.plan.run(list(inputs))
        return outs[0] if len(outs) == 1 else tuple(outs)


def _region_node(region, k):
    node = Node("_sg_onnxruntime", f"sg{k}", {"num_outputs": str(len(region.outputs))},
                op=get_op("_sg_onnxruntime"))
    node._parsed = Attrs(node.parsed, runner=_NumpyEngine(region.symbol))
    return node


def _random_graph(seed: int, n: int = 24):
    rng = random.Random(seed)
    nodes = [Node("null", "x"), Node("null", "y")]
    read = set()
    for k in range(n):
        if rng.random() < 0.5:
            a = rng.choice(nodes[-6:])
            node = Node(rng.choice(UNARY), f"n{k}", inputs=[(a, 0)])
            read.add(id(a))
        else:
            a, b = rng.choice(nodes[-6:]), rng.choice(nodes)
            node = Node(rng.choice(BINARY), f"n{k}", inputs=[(a, 0), (b, 0)])
            read |= {id(a), id(b)}
        nodes.append(node)
    sinks = [m for m in nodes[2:] if id(m) not in read]
    return Symbol([(m, 0) for m in sinks] + [(nodes[2 + n // 2], 0)])


def _contracted_has_cycle(sym, groups) -> bool:
    """Independent check: the graph with each group as one unit, searched for a cycle."""
    unit = {id(m): ("g", k) for k, g in enumerate(groups) for m in g}
    edges = {}
    for n in sym.topo():
        u = unit.get(id(n), ("n", id(n)))
        for s, _ in n.inputs:
            v = unit.get(id(s), ("n", id(s)))
            if v != u:
                edges.setdefault(v, set()).add(u)
    state = {}

    def visit(u) -> bool:                      # graphs here are small: recursion is fine
        state[u] = 1
        for w in edges.get(u, ()):
            if state.get(w) == 1 or (w not in state and visit(w)):
                return True
        state[u] = 2
        return False
    return any(u not in state and visit(u) for u in list(edges))


def _connected(g) -> bool:
    ids = {id(m) for m in g}
    near = {id(m): [s for s, _ in m.inputs if id(s) in ids] for m in g}
    for m in g:
        for s in near[id(m)]:
            near[id(s)] = near[id(s)] + [m]
    seen, stack = set(), [g[0]]
    while stack:
        v = stack.pop()
        if id(v) not in seen:
            seen.add(id(v))
            stack += near[id(v)]
    return seen == ids


def _check_partition(sym, groups, supported):
    order = sym.topo()
    gid = {id(m): k for k, g in enumerate(groups) for m in g}
    assert sum(len(g) for g in groups) == len(gid)                       # disjoint
    assert {id(n) for n in order if not n.is_var and supported(n)} == set(gid)
    assert all(_connected(g) for g in groups)
    assert not _contracted_has_cycle(sym, groups)
    for n in order:                                   # maximal: adjacent regions cannot merge
        for s, _ in n.inputs:
            a, b = gid.get(id(n)), gid.get(id(s))
            if a is not None and b is not None and a != b:
                merged = [g for k, g in enumerate(groups) if k not in (a, b)]
                assert _contracted_has_cycle(sym, merged + [groups[a] + groups[b]])


def _run(sym, feed):
    names = sym.list_inputs()
    return Plan(sym, names).run([feed[n] for n in names])


@pytest.mark.parametrize("seed", range(60))
def test_random_partitions_are_maximal_acyclic_and_keep_outputs(seed):
    sym = _random_graph(seed)
    rng = random.Random(1000 + seed)
    marked = {id(n) for n in sym.topo() if rng.random() < 0.7}
    supported = lambda n: id(n) in marked                       # noqa: E731
    groups = find_groups(sym, supported)
    _check_partition(sym, groups, supported)
    out = contract(sym, groups, _region_node)
    assert sum(n.opname == "_sg_onnxruntime" for n in out.topo()) == len(groups)
    feed = {"x": np.linspace(-1, 1, 6, dtype=np.float32), "y": np.full(6, 0.5, np.float32)}
    want = _run(sym, feed)
    for got, ref in zip(_run(out, feed), want):
        np.testing.assert_allclose(got, ref, rtol=1e-6)
    back = expand(out)
    assert [n.name for n in back.topo()] == [n.name for n in sym.topo()]
    for got, ref in zip(_run(back, feed), want):
        np.testing.assert_array_equal(got, ref)


def test_a_path_through_an_unsupported_node_keeps_two_regions():
    x = Node("null", "x")
    a = Node("relu", "a", inputs=[(x, 0)])
    u = Node("sigmoid", "u", inputs=[(a, 0)])               # unsupported
    b = Node("elemwise_add", "b", inputs=[(a, 0), (u, 0)])
    sym = Symbol([(b, 0)])
    groups = find_groups(sym, lambda n: n.name != "u")
    assert [[m.name for m in g] for g in groups] == [["a"], ["b"]]
    out = contract(sym, groups, _region_node)
    assert [n.opname for n in out.topo() if not n.is_var] == \
        ["_sg_onnxruntime", "sigmoid", "_sg_onnxruntime"]


def test_regions_merge_once_the_blocking_node_joins():
    # a → u → b and a → b: with u supported the three form one region
    x = Node("null", "x")
    a = Node("relu", "a", inputs=[(x, 0)])
    u = Node("sigmoid", "u", inputs=[(a, 0)])
    b = Node("elemwise_add", "b", inputs=[(a, 0), (u, 0)])
    groups = find_groups(Symbol([(b, 0)]), lambda n: True)
    assert [[m.name for m in g] for g in groups] == [["a", "u", "b"]]


def test_region_outputs_are_what_outside_reads_and_expand_restores_names():
    x = Node("null", "x")
    a = Node("relu", "a", inputs=[(x, 0)])
    b = Node("tanh", "b", inputs=[(a, 0)])
    u = Node("sigmoid", "u", inputs=[(a, 0)])
    c = Node("elemwise_mul", "c", inputs=[(b, 0), (u, 0)])
    sym = Symbol([(c, 0), (b, 0)])
    groups = find_groups(sym, lambda n: n.name in ("a", "b"))
    out = contract(sym, groups, _region_node)
    sg = [n for n in out.topo() if n.opname == "_sg_onnxruntime"][0]
    assert [n.name for n, _ in sg.subgraphs[0].outputs] == ["a", "b"]    # u and c read them
    assert sg.subgraphs[0].list_inputs() == ["x"]
    assert expand(out).list_outputs() == sym.list_outputs()


def test_a_region_node_without_engine_says_so():
    x = Node("null", "x")
    node = Node("_sg_onnxruntime", "sg", {"num_inputs": "1"}, [(x, 0)])
    with pytest.raises(Exception, match="built by optimize_for"):
        Plan(Symbol([(node, 0)]), ["x"]).run([np.ones(2, np.float32)])
