"""Epilogue fusion into `_hs_conv2d` / `_hs_affine` (after the layout pass).

* residual add: `elemwise_add(conv(x), r)` → `conv(x, sum=r)` (the GEMM output gets `+= r`);
* activation: `relu/clip/sigmoid/tanh(conv(...))` → `conv(..., act_type=...)`, and the same for
  `_hs_affine` (an unfolded BatchNorm followed by its ReLU) and FullyConnected (→ `_hs_dense`).

The registry says which op is which: the groups `OpGroup.ADDS` (and `SAME_SHAPE_OPERANDS` for
MXNet 1.x's elemwise_add) and `FUSES_ACT` / `FUSES_SUM` (what a producer absorbs), and the
entries' `epilogue` (the activation a GEMM epilogue computes for it) and `with_act` (the op
computing a producer plus its activation).

Only when the producer's output feeds nothing else (and is no graph output), so no other consumer
ever sees the pre-epilogue value. The epilogue runs in place on the GEMM output buffer.
"""
from __future__ import annotations

from ...ops.groups import OpGroup
from ...ops.registry import get_op
from ...symbol.graph import Node, Symbol
from ...symbol.infer import infer_shapes
from .rewrite import consumers, rebuild, variant


def _act_of(n: Node):
    """(act_type, a_min, a_max) if n is an activation a GEMM epilogue computes, else None."""
    if n.is_var or n.op.epilogue is None:
        return None
    return n.op.epilogue(n.parsed)


_FUSES = {"act": OpGroup.FUSES_ACT, "sum": OpGroup.FUSES_SUM}


def _fuses(n: Node, what: str) -> bool:
    return not n.is_var and n.op.name in _FUSES[what]


def fuse_sum(sym: Symbol, known: dict[str, tuple] | None = None) -> Symbol:
    """`known`: input/parameter shapes; with them, broadcasting adds whose operands have the
    same shape (NumPy-style graphs: `x + residual` traces to `_npi_add`) fuse too."""
    uses = consumers(sym)
    shapes = None
    if known and any(_broadcast_add(n) for n in sym.topo()):
        shapes = infer_shapes(sym, known, tolerant=True)

    def same_shape(n: Node) -> bool:
        if n.is_var or n.op.name not in OpGroup.ADDS:
            return False
        if n.op.name in OpGroup.SAME_SHAPE_OPERANDS:
            return True
        if shapes is None:
            return False
        a, b = (shapes.get((id(s), i)) for s, i in n.inputs)
        return a is not None and a == b

    def visit(n: Node, ins, done):
        if len(n.inputs) != 2 or not same_shape(n):
            return None
        for k in (0, 1):
            src, _ = n.inputs[k]
            new_src = ins[k][0]
            if (_fuses(src, "sum") and uses.get(id(src), 0) == 1
                    and not new_src.parsed.with_sum and new_src.parsed.act_type == "none"
                    and ins[1 - k][0] is not new_src):
                c = variant(new_src, new_src.inputs + [ins[1 - k]], with_sum="1")
                return [(c, 0)]
        return None
    return rebuild(sym, visit)


def _broadcast_add(n: Node) -> bool:
    return not n.is_var and n.op.name in OpGroup.ADDS - OpGroup.SAME_SHAPE_OPERANDS


def fuse_act(sym: Symbol) -> Symbol:
    uses = consumers(sym)

    def visit(n: Node, ins, done):
        act = _act_of(n)
        if act is None or len(n.inputs) != 1:
            return None
        src, _ = n.inputs[0]
        new_src = ins[0][0]
        if (_fuses(src, "act") and uses.get(id(src), 0) == 1
                and new_src.parsed.act_type == "none"):
            c = variant(new_src, new_src.inputs, act_type=act[0], a_min=act[1], a_max=act[2])
            return [(c, i) for i in range(n.num_outputs())]
        if (not src.is_var and src.op.with_act and uses.get(id(src), 0) == 1
                and new_src.op is src.op):
            attrs = {k: v for k, v in new_src.attrs.items() if k in new_src.op.attrs}
            attrs.update(act_type=act[0], a_min=str(act[1]), a_max=str(act[2]))
            fused = get_op(src.op.with_act)
            c = Node(fused.name, new_src.name, attrs, op=fused)
            c.inputs = list(new_src.inputs)
            return [(c, i) for i in range(n.num_outputs())]
        return None
    return rebuild(sym, visit)


def fuse_epilogues(sym: Symbol, known: dict[str, tuple] | None = None) -> Symbol:
    return fuse_act(fuse_sum(sym, known))
