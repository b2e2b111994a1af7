"""The graph rewrite behind `amp.convert_symbol`: MXNet 1.9.1's ReducePrecision pass on our graph.

Nodes are visited in topological order, tracking which tensors are known to hold the target type
(`low`) or float32 (`fp32`):
* float32 ops (and excluded names): each non-variable input not known float32 gets an
  `amp_cast` to float32 (one per tensor, shared by its consumers); variables are used as they are;
* target ops: each input not known in the target type gets an `amp_cast` to it — parameters
  too, unless `cast_optional_params` (then the parameter itself is stored in the target type)
  or the input is a mutated auxiliary state; their outputs hold the target type;
* widest-type ops: with every input's type known, inputs are cast to float32 if any is float32,
  else to the target type; otherwise one `amp_multicast` over all inputs decides at run time;
* conditional float32 ops whose attribute matches: as float32 ops;
* any other op: no casts; its outputs take input 0's type where the op passes its type on.
Graph outputs not known float32 get a final `amp_cast` to float32. Cast nodes are named as MXNet
names them (`<node>[_<output>]_amp_cast_<dtype>`, `<node>[_<output>]_amp_multicast`), so a
converted graph equals MXNet's node for node.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...ops.registry import OpDef
from ...symbol.graph import Node, Symbol

_F32 = np.dtype(np.float32)
_BF16_FLAG = "12"


@dataclass
class Lists:
    """Operator names by role, and the options of one conversion."""
    target: set[str]
    fp32: set[str]
    widest: set[str]
    flowing: set[str]                                      # either type: no casts of their own
    conditional: dict[str, dict[str, list[str]]]           # op → attr → float32 values
    excluded: set[str] = field(default_factory=set)        # node names kept in float32
    data_names: set[str] = field(default_factory=set)
    cast_optional_params: bool = False


def _role(node: Node, lists: Lists) -> str:
    """How the pass treats a node: by the first of its names (as written in the graph, the
    canonical one, then aliases) that a list knows."""
    if node.name in lists.excluded:
        return "fp32"
    op: OpDef = node.op
    for name in (node.opname, op.name, *op.aliases):
        if name in lists.fp32:
            return "fp32"
        if name in lists.target:
            return "target"
        if name in lists.widest:
            return "widest"
        if name in lists.conditional:
            hits = lists.conditional[name]
            return "fp32" if any(node.attrs.get(k) in v for k, v in hits.items()) else "other"
        if name in lists.flowing:
            return "other"
    return "other"


def _suffix(e) -> str:
    """MXNet's name part for output `i` of a node: none for a variable, the output's name
    where the op names its outputs, else its index."""
    n, i = e
    if n.is_var:
        return ""
    return f"_{i}" if n.op.monitor_indexed_outputs else f"_{n.op.output_name(n.parsed, i)}"


def _passes_type(node: Node) -> list[int]:
    """Outputs that take input 0's floating type (MXNet infers them from it)."""
    try:
        outs = node.op.dtypes(node.parsed, [_F32] * max(1, len(node.inputs)))
    except Exception:  # noqa: BLE001 - an op whose type rule needs more than input 0
        return []
    return [i for i, d in enumerate(outs) if d is not None and np.dtype(d) == _F32]


class _Rewrite:
    def __init__(self, lists: Lists, target_name: str):
        self.lists, self.target_name = lists, target_name
        self.new: dict[int, Node] = {}
        self.low: dict[tuple, tuple] = {}     # (id(old node), i) → new entry in the target type
        self.fp32: dict[tuple, tuple] = {}    # … → new entry in float32

    def mirror(self, e) -> tuple:
        return self.new[id(e[0])], e[1]

    def cast(self, e, dtype: str) -> tuple:
        """The (shared) cast of old entry `e` to `dtype`."""
        table = self.low if dtype == self.target_name else self.fp32
        key = (id(e[0]), e[1])
        if key not in table:
            name = f"{e[0].name}{_suffix(e)}_amp_cast_{dtype}"
            table[key] = (Node("amp_cast", name, {"dtype": dtype}, [self.mirror(e)]), 0)
        return table[key]

    def mark(self, node: Node, low: bool, outputs=None) -> None:
        table = self.low if low else self.fp32
        for i in (range(node.num_outputs()) if outputs is None else outputs):
            table[(id(node), i)] = (self.new[id(node)], i)

    def visit(self, node: Node) -> None:
        c = Node(node.opname, node.name, node.attrs, op=node.op)
        c.subgraphs = node.subgraphs
        c.control_deps = [self.new[id(d)] for d in node.control_deps if id(d) in self.new]
        self.new[id(node)] = c
        if node.is_var:
            return
        getattr(self, f"_{_role(node, self.lists)}")(node, c)

    def _fp32(self, node: Node, c: Node) -> None:
        self.mark(node, False)
        c.inputs = [self.fp32.get((id(e[0]), e[1])) or
                    (self.mirror(e) if e[0].is_var else self.cast(e, "float32"))
                    for e in node.inputs]

    def _target(self, node: Node, c: Node) -> None:
        self.mark(node, True, _passes_type(node))
        aux = set(node.op.aux_of(node.parsed))
        ins = []
        for j, e in enumerate(node.inputs):
            key = (id(e[0]), e[1])
            if key in self.low:
                ins.append(self.low[key])
            elif e[0].is_var and self.lists.cast_optional_params \
                    and e[0].name not in self.lists.data_names:
                self.new[id(e[0])].attrs["__dtype__"] = _BF16_FLAG   # stored in the target type
                ins.append(self.low.setdefault(key, self.mirror(e)))
            elif j in aux:
                ins.append(self.mirror(e))
            else:
                ins.append(self.cast(e, self.target_name))
        c.inputs = ins

    def _widest(self, node: Node, c: Node) -> None:
        keys = [(id(e[0]), e[1]) for e in node.inputs]
        if any(k not in self.low and k not in self.fp32 for k in keys):
            e0 = node.inputs[0]
            mc = Node("amp_multicast", f"{e0[0].name}{_suffix(e0)}_amp_multicast",
                      {"num_outputs": str(len(keys))}, [self.mirror(e) for e in node.inputs])
            c.inputs = [(mc, i) for i in range(len(keys))]
            return
        low = not any(k in self.fp32 for k in keys)
        self.mark(node, low)
        table, dtype = (self.low, self.target_name) if low else (self.fp32, "float32")
        c.inputs = [table.get(k) or self.cast(e, dtype) for k, e in zip(keys, node.inputs)]

    def _other(self, node: Node, c: Node) -> None:
        if node.inputs:
            key = (id(node.inputs[0][0]), node.inputs[0][1])
            if key in self.low or key in self.fp32:
                self.mark(node, key in self.low, _passes_type(node))
        c.inputs = [self.mirror(e) for e in node.inputs]


def reduce_precision(sym: Symbol, lists: Lists, target_name: str = "bfloat16") -> Symbol:
    """`sym` with `amp_cast`/`amp_multicast` nodes so the `lists.target` ops run in
    `target_name` (see the module docstring); `sym` itself is not changed."""
    rw = _Rewrite(lists, target_name)
    for node in sym.topo():
        rw.visit(node)
    return Symbol([rw.fp32.get((id(n), i)) or rw.cast((n, i), "float32")
                   for n, i in sym.outputs])
