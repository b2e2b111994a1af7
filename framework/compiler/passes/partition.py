"""Subgraph partitioning, MXNet style: regions of supported nodes become single subgraph nodes.

`find_groups` grows maximal regions of supported op nodes along the graph's edges. Contraction
must leave the graph acyclic: no path may leave a region and come back (a lowerable A →
unsupported X → lowerable B with A → B as well would, once A and B are one node, make that node
both feed and read X), counting paths that cross other regions, which become single nodes too.
Regions are merged while any adjacent pair can be, so the result is maximal: two adjacent
regions left apart would close a cycle.

`contract` replaces each region by one node whose `subgraphs[0]` holds a copy of the region (its
variables stand for what the region reads from outside, named after those entries: parameters
keep their names); `expand` inlines such nodes back, giving the original graph.
"""
from __future__ import annotations

import heapq
from typing import Callable

from ...ops.groups import OpGroup
from ...symbol.graph import Node, Symbol
from .rewrite import rebuild

Entry = tuple


def find_groups(sym: Symbol, supported: Callable[[Node], bool]) -> list[list[Node]]:
    """Maximal connected regions of op nodes for which `supported(node)` whose contraction
    leaves the graph acyclic; each in topological order, regions ordered by their first node.

    One pass in topological order lets each node join (and so merge) its inputs' regions; a
    merge is refused when some path would leave the merged region and come back, jumping inside
    other regions as the contracted graph will. Then adjacent regions are merged until no pair
    can be (a merge may unblock another)."""
    order = sym.topo()
    pos = {id(n): k for k, n in enumerate(order)}
    succs: dict[int, list[Node]] = {id(n): [] for n in order}
    for n in order:
        for src, _ in n.inputs:
            succs[id(src)].append(n)
    group: dict[int, list[Node]] = {}

    def merge(a: list[Node], b: list[Node], limit: int) -> bool:
        if _closes_cycle(a + b, succs, pos, group, limit):
            return False
        merged = a + b
        for m in merged:
            group[id(m)] = merged
        return True

    for n in order:
        if n.is_var or not supported(n):
            continue
        group[id(n)] = [n]
        for src, _ in n.inputs:          # later nodes are singletons yet: paths via them end
            if id(src) in group and group[id(src)] is not group[id(n)]:
                merge(group[id(src)], group[id(n)], pos[id(n)])
    changed = True
    while changed:
        changed = False
        for n in order:
            for src, _ in n.inputs if id(n) in group else ():
                a, b = group.get(id(src)), group[id(n)]
                if a is not None and a is not b and merge(a, b, len(order)):
                    changed = True
    unique = {id(g): g for g in group.values()}.values()
    return sorted((sorted(g, key=lambda m: pos[id(m)]) for g in unique),
                  key=lambda g: pos[id(g[0])])


def _closes_cycle(members: list[Node], succs: dict, pos: dict, group: dict, limit: int) -> bool:
    """Whether a path leaves `members` and comes back, entering another region at one node and
    leaving it at any (as after contraction). Nodes after `limit` are not explored."""
    inside = {id(m) for m in members}
    seen: set[int] = set()
    stack = [s for m in members for s in succs[id(m)] if id(s) not in inside]
    while stack:
        v = stack.pop()
        if id(v) in inside:
            return True
        if id(v) in seen or pos[id(v)] > limit:
            continue
        for u in group.get(id(v), [v]):
            seen.add(id(u))
            stack.extend(succs[id(u)])
    return False


class Region:
    """One group cut out of a graph: `members` (its outer nodes), `symbol` (their copy),
    `inputs` (outer entries its variables stand for, in `symbol.list_inputs()` order) and
    `outputs` (outer entries it produces, in `symbol.outputs` order)."""

    def __init__(self, members: list[Node], readers: dict[Entry, bool]):
        self.members = members
        inside = {id(m) for m in members}
        ext: dict[Entry, Node] = {}
        names: set[str] = set()
        copies: dict[int, Node] = {}
        for m in members:
            for src, i in m.inputs:
                if id(src) not in inside and (id(src), i) not in ext:
                    ext[(id(src), i)] = _variable(src, i, names)
            c = Node(m.opname, m.name, m.attrs, op=m.op)
            c.inputs = [(copies[id(s)], i) if id(s) in inside else (ext[(id(s), i)], 0)
                        for s, i in m.inputs]
            c.subgraphs, c._parsed = m.subgraphs, m._parsed
            copies[id(m)] = c
        self.outputs = [(m, i) for m in members for i in range(m.num_outputs())
                        if readers.get((id(m), i))]
        self.symbol = Symbol([(copies[id(m)], i) for m, i in self.outputs])
        by_name = {v.name: key for key, v in ext.items()}
        sources = {(id(src), i): (src, i) for m in members for src, i in m.inputs}
        self.inputs = [sources[by_name[name]] for name in self.symbol.list_inputs()]


def _variable(src: Node, i: int, taken: set[str]) -> Node:
    """The subgraph variable standing for outer entry (src, i): a variable keeps its name (and
    attrs), an op output is named after it."""
    base = src.name if src.is_var else src.output_name(i)
    name, k = base, 1
    while name in taken:
        name, k = f"{base}_{k}", k + 1
    taken.add(name)
    return Node("null", name, src.attrs if src.is_var else None)


def _outside_readers(sym: Symbol, groups: list[list[Node]]) -> dict[Entry, bool]:
    """Entries read by a node of another region (or none) or by the graph's outputs."""
    gid = {id(m): k for k, g in enumerate(groups) for m in g}
    read: dict[Entry, bool] = {(id(n), i): True for n, i in sym.outputs}
    for n in sym.topo():
        for src, i in n.inputs:
            if id(src) in gid and gid.get(id(n)) != gid[id(src)]:
                read[(id(src), i)] = True
    return read


def contract(sym: Symbol, groups: list[list[Node]],
             make_node: Callable[[Region, int], Node]) -> Symbol:
    """Replace each group by the node `make_node(region, k)` (op and attrs; its inputs are wired
    here to `region.inputs`, its outputs stand for `region.outputs`, `subgraphs` holds
    `region.symbol`)."""
    readers = _outside_readers(sym, groups)
    regions = [Region(g, readers) for g in groups]
    new: dict[Entry, Entry] = {}
    for unit in _unit_order(sym, groups):
        if isinstance(unit, int):
            r = regions[unit]
            node = make_node(r, unit)
            node.inputs = [new[(id(s), i)] for s, i in r.inputs]
            node.subgraphs = [r.symbol]
            for j, (m, i) in enumerate(r.outputs):
                new[(id(m), i)] = (node, j)
            continue
        c = Node(unit.opname, unit.name, unit.attrs, op=unit.op)
        c.inputs = [new[(id(s), i)] for s, i in unit.inputs]
        c.subgraphs, c._parsed = unit.subgraphs, unit._parsed
        for i in range(unit.num_outputs()):
            new[(id(unit), i)] = (c, i)
    return type(sym)([new[(id(n), i)] for n, i in sym.outputs])


def _unit_order(sym: Symbol, groups: list[list[Node]]) -> list:
    """Topological order of the contracted graph: ungrouped nodes and group indices (Kahn's
    algorithm, ties broken by original position so the order stays close to the original)."""
    order = sym.topo()
    gid = {id(m): k for k, g in enumerate(groups) for m in g}
    key = {id(n): ("g", gid[id(n)]) if id(n) in gid else ("n", id(n)) for n in order}
    first: dict[tuple, int] = {}
    unit: dict[tuple, object] = {}
    for k, n in enumerate(order):
        first.setdefault(key[id(n)], k)
        unit.setdefault(key[id(n)], gid[id(n)] if id(n) in gid else n)
    deps: dict[tuple, set] = {u: set() for u in first}
    for n in order:
        deps[key[id(n)]].update(key[id(s)] for s, _ in n.inputs if key[id(s)] != key[id(n)])
    users: dict[tuple, list] = {u: [] for u in first}
    for u, ds in deps.items():
        for d in ds:
            users[d].append(u)
    waiting = {u: len(ds) for u, ds in deps.items()}
    ready = [(first[u], u) for u, n in waiting.items() if n == 0]
    heapq.heapify(ready)
    out = []
    while ready:
        _, u = heapq.heappop(ready)
        out.append(unit[u])
        for v in users[u]:
            waiting[v] -= 1
            if not waiting[v]:
                heapq.heappush(ready, (first[v], v))
    if len(out) != len(first):
        raise ValueError("partition: the contracted graph has a cycle")
    return out


def expand(sym: Symbol) -> Symbol:
    """Inline every subgraph node (an op of `OpGroup.RUNS_SUBGRAPH`) back into its original
    nodes."""
    if not any(is_region(n) for n in sym.topo()):
        return sym

    def visit(n: Node, ins: list[Entry], done) -> list[Entry] | None:
        if not is_region(n):
            return None
        sub = n.subgraphs[0]
        feed = dict(zip(sub.list_inputs(), ins))
        inner = rebuild(sub, lambda m, _i, _d: [feed[m.name]] if m.is_var else None)
        return list(inner.outputs)

    return rebuild(sym, visit)


def is_region(n: Node) -> bool:
    """A partitioned region: a node whose op runs its subgraph (`OpGroup.RUNS_SUBGRAPH`)."""
    return bool(n.subgraphs) and n.op is not None and n.op.name in OpGroup.RUNS_SUBGRAPH


def regions(sym: Symbol) -> list[Node]:
    """The graph's partitioned regions, in topological order."""
    return [n for n in sym.topo() if is_region(n)]
