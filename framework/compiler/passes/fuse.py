"""Epilogue fusion into `_hs_conv2d` / `_hs_affine` (after the layout pass).

* residual add: `elemwise_add(conv(x), r)` → `conv(x, sum=r)` (the GEMM output gets `+= r`);
* activation: `relu/clip/sigmoid/tanh(conv(...))` → `conv(..., act_type=...)`, and the same for
  `_hs_affine` (an unfolded BatchNorm followed by its ReLU) and FullyConnected (→ `_hs_dense`).

Only when the producer's output feeds nothing else (and is no graph output), so no other consumer
ever sees the pre-epilogue value. The epilogue runs in place on the GEMM output buffer.
"""
from __future__ import annotations

from ...symbol.graph import Node, Symbol
from .rewrite import consumers, rebuild

_FUSABLE = ("_hs_conv2d", "_hs_affine")
_SAME_SHAPE_ADDS = ("elemwise_add", "_plus", "_Plus", "_add")   # MXNet 1.x: shapes must agree
_BROADCAST_ADDS = ("_npi_add", "broadcast_add", "broadcast_plus")  # fused when shapes agree


def _act_of(n: Node):
    """(act_type, a_min, a_max) if n is an activation the epilogue implements, else None."""
    op = n.op.name if n.op is not None else None
    a = n.parsed if op else None
    if op == "Activation" and a.act_type in ("relu", "sigmoid", "tanh"):
        return (a.act_type, 0.0, 6.0)
    if op == "_npx_relu":
        return ("relu", 0.0, 6.0)
    if op == "_npx_sigmoid":
        return ("sigmoid", 0.0, 6.0)
    if op == "clip":
        lo = float("-inf") if a.a_min is None else float(a.a_min)
        hi = float("inf") if a.a_max is None else float(a.a_max)
        if lo == 0.0 and hi == float("inf"):
            return ("relu", 0.0, 6.0)
        return ("clip", lo, hi)
    return None


def _clone(n: Node, ins, **attrs) -> Node:
    new = dict(n.attrs)
    new.update({k: str(v) for k, v in attrs.items()})
    c = Node(n.opname, n.name, new, op=n.op)
    c.inputs = list(ins)
    return c


def fuse_sum(sym: Symbol, known: dict[str, tuple] | None = None) -> Symbol:
    """`known`: input/parameter shapes; with them, broadcasting adds whose operands have the
    same shape (NumPy-style graphs: `x + residual` traces to `_npi_add`) fuse too."""
    uses = consumers(sym)
    shapes = None
    if known and any(n.opname in _BROADCAST_ADDS for n in sym.topo()):
        from ...symbol.infer import infer_shapes
        shapes = infer_shapes(sym, known, tolerant=True)

    def same_shape(n: Node) -> bool:
        if n.opname in _SAME_SHAPE_ADDS:
            return True
        if n.opname not in _BROADCAST_ADDS or shapes is None:
            return False
        a, b = (shapes.get((id(s), i)) for s, i in n.inputs)
        return a is not None and a == b

    def visit(n: Node, ins, done):
        if len(n.inputs) != 2 or not same_shape(n):
            return None
        for k in (0, 1):
            src, _ = n.inputs[k]
            new_src = ins[k][0]
            if (src.opname == "_hs_conv2d" and uses.get(id(src), 0) == 1
                    and not new_src.parsed.with_sum and new_src.parsed.act_type == "none"
                    and ins[1 - k][0] is not new_src):
                c = _clone(new_src, new_src.inputs + [ins[1 - k]], with_sum="1")
                return [(c, 0)]
        return None
    return rebuild(sym, visit)


def fuse_act(sym: Symbol) -> Symbol:
    uses = consumers(sym)

    def visit(n: Node, ins, done):
        act = _act_of(n) if n.op is not None and not n.is_var else None
        if act is None or len(n.inputs) != 1:
            return None
        src, _ = n.inputs[0]
        new_src = ins[0][0]
        if (src.opname in _FUSABLE and uses.get(id(src), 0) == 1
                and new_src.parsed.act_type == "none"):
            c = _clone(new_src, new_src.inputs, act_type=act[0], a_min=act[1], a_max=act[2])
            return [(c, i) for i in range(n.num_outputs())]
        if (src.op is not None and src.op.name == "FullyConnected" and uses.get(id(src), 0) == 1
                and new_src.opname == src.opname):
            attrs = {k: v for k, v in new_src.attrs.items() if k in new_src.op.attrs}
            attrs.update(act_type=act[0], a_min=str(act[1]), a_max=str(act[2]))
            c = Node("_hs_dense", new_src.name, attrs)
            c.inputs = list(new_src.inputs)
            return [(c, i) for i in range(n.num_outputs())]
        return None
    return rebuild(sym, visit)


def fuse_epilogues(sym: Symbol, known: dict[str, tuple] | None = None) -> Symbol:
    return fuse_act(fuse_sum(sym, known))
