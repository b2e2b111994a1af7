"""MXNet 1.9.1's oneDNN fusion before quantization (`get_backend_symbol('MKLDNN_QUANTIZE')`).

Convolution [→ BatchNorm] [→ elemwise_add] [→ activation] becomes one `_sg_mkldnn_conv` node and
FullyConnected [→ activation] one `_sg_mkldnn_fully_connected` node, each holding its region as
a subgraph (the original nodes, reading variables named after the region's inputs). A chain
stops at a node whose output feeds anything else; activations are those the INT8 kernels fuse
(ReLU; LeakyReLU leaky/gelu (elu for FC); clip from 0, not after a sum). Nodes are named as
MXNet names them (`sg_mkldnn_conv_bn_add_act_<k>`, one counter per kind, in graph order).
"""
from __future__ import annotations

from ...compiler.passes.rewrite import consumers, rebuild
from ...ops.registry import get_op
from ...symbol.graph import Node, Symbol

Entry = tuple


def _ops() -> dict:
    """The operators a fused chain is made of, by role."""
    return {"conv": get_op("Convolution"), "bn": get_op("BatchNorm"),
            "sum": get_op("elemwise_add"), "act": get_op("Activation"),
            "leaky": get_op("LeakyReLU"), "clip": get_op("clip"), "fc": get_op("FullyConnected"),
            "sg_conv": get_op("_sg_mkldnn_conv"), "sg_fc": get_op("_sg_mkldnn_fully_connected")}


def _is(n: Node, role: str) -> bool:
    return not n.is_var and n.op is _ops()[role]


def _fusable_act(n: Node, after_sum: bool, fc: bool) -> bool:
    a = n.parsed
    if _is(n, "act"):
        return a.act_type == "relu"
    if _is(n, "leaky"):
        return a.act_type in (("leaky", "elu", "gelu") if fc else ("leaky", "gelu"))
    if _is(n, "clip"):
        return a.a_min == 0 and not after_sum
    return False


def _readers(sym: Symbol) -> dict[int, list[Node]]:
    out: dict[int, list[Node]] = {}
    for n in sym.topo():
        for src, _ in n.inputs:
            out.setdefault(id(src), []).append(n)
    return out


def _conv_chain(conv: Node, next_of) -> list[Node]:
    chain, stage = [conv], "start"
    while True:
        nxt = next_of(chain[-1])
        if nxt is None:
            return chain
        if stage == "start" and _is(nxt, "bn") and not nxt.parsed.get("output_mean_var"):
            stage = "bn"
        elif stage in ("start", "bn") and _is(nxt, "sum") \
                and nxt.inputs[0][0] is not nxt.inputs[1][0]:
            stage = "sum"
        elif _fusable_act(nxt, stage == "sum", fc=False):
            chain.append(nxt)
            return chain
        else:
            return chain
        chain.append(nxt)


def _fc_chain(fc: Node, next_of) -> list[Node]:
    nxt = next_of(fc)
    return [fc, nxt] if nxt is not None and _fusable_act(nxt, False, fc=True) else [fc]


def _entry_name(src: Node, i: int) -> str:
    """MXNet's name of an output entry: a variable's name, else `<node>_<output name>`."""
    if src.is_var:
        return src.name
    if src.num_outputs() == 1:
        return f"{src.name}_output"
    return src.output_name(i)


def _region(chain: list[Node], ins_of) -> tuple[Symbol, list[Entry]]:
    """The chain as a subgraph over fresh variables, and the outer entries those read (the
    running chain is always the left operand of its sum, the other operand the last input)."""
    inside = {id(n) for n in chain}
    outer: list[Entry] = []
    names: dict[tuple, Node] = {}
    copies: dict[int, Node] = {}
    for n in chain:
        ins = list(zip(n.inputs, ins_of(n)))
        if _is(n, "sum") and id(n.inputs[1][0]) in inside:
            ins.reverse()
        new_ins = []
        for (src, i), new_entry in ins:
            if id(src) in inside:
                new_ins.append((copies[id(src)], i))
                continue
            key = (id(new_entry[0]), new_entry[1])
            if key not in names:
                names[key] = Node("null", _entry_name(*new_entry) + "0")
                outer.append(new_entry)
            new_ins.append((names[key], 0))
        c = Node(n.opname, n.name, n.attrs, new_ins, op=n.op)
        c._parsed = n._parsed
        copies[id(n)] = c
    return Symbol([(copies[id(chain[-1])], 0)]), outer


def _conv_flags(chain: list[Node]) -> tuple[str, dict[str, str]]:
    parts, flags, summed = ["conv"], {}, False
    for n in chain[1:]:
        if _is(n, "bn"):
            parts.append("bn")
            flags["with_bn"] = "true"
        elif _is(n, "sum"):
            parts.append("add")
            flags["with_sum"] = "true"
            summed = True
        else:
            parts.append("act")
            flags["with_postsum_act" if summed else "with_act"] = "true"
    return "_".join(parts), flags


def _fc_flags(chain: list[Node]) -> tuple[str, dict[str, str]]:
    if len(chain) == 1:
        return "fully_connected", {}
    return "fully_connected_eltwise", {"with_eltwise": "True"}


def fuse_for_quantization(sym: Symbol) -> Symbol:
    """The float graph with its conv and FC chains fused into MXNet's oneDNN subgraph nodes."""
    uses, readers = consumers(sym), _readers(sym)

    chains: dict[int, list[Node]] = {}      # id(tail) -> chain
    taken: set[int] = set()                 # nodes already in a region (a sum read by two)

    def next_of(n: Node):
        rs = readers.get(id(n), [])
        ok = uses.get(id(n), 0) == 1 and len(rs) == 1 and id(rs[0]) not in taken
        return rs[0] if ok else None

    counters = {"conv": 0, "fc": 0}
    order: dict[int, tuple] = {}
    for n in sym.topo():
        if id(n) in taken:
            continue
        if _is(n, "conv") and len(n.parsed.kernel) in (2, 3):
            chain, kind = _conv_chain(n, next_of), "conv"
        elif _is(n, "fc"):
            chain, kind = _fc_chain(n, next_of), "fc"
        else:
            continue
        taken.update(id(m) for m in chain)
        chains[id(chain[-1])] = chain
        order[id(chain[-1])] = (kind, counters[kind])
        counters[kind] += 1

    def visit(n: Node, ins, done):
        chain = chains.get(id(n))
        if chain is None:
            return None
        kind, k = order[id(n)]
        sub, outer = _region(chain, lambda m: [done[id(s)][i] for s, i in m.inputs])
        stem, flags = (_conv_flags if kind == "conv" else _fc_flags)(chain)
        op = _ops()["sg_conv" if kind == "conv" else "sg_fc"]
        node = Node(op.name, f"sg_mkldnn_{stem}_{k}", flags, outer, op=op)
        node.subgraphs = [sub]
        return [(node, 0)]

    return rebuild(sym, visit)
