"""Channels-last (NHWC) internal layout for 2-D convolutional graphs.

Every 2-D Convolution with known weights becomes `_hs_conv2d` (ops/nhwc.py): it reads NHWC
data (or the NCHW graph input directly), writes NHWC, and its weight parameter is rewritten once,
here, into the GEMM-ready layout — so im2col copies contiguous channel vectors, 1x1 convolutions
are plain GEMMs and no kernel transposes anything per call. Layout-agnostic consumers keep the
NHWC value: element-wise ops (unary, scalar, and binary ops whose inputs are all NHWC — both
operands are then permuted alike, so broadcasting is unchanged), 2-D Pooling (its `layout`
becomes NHWC), BatchNorm over the channel axis and Concat (their axis is remapped). Inference
BatchNorms that could not be folded become `_hs_affine` (precomputed scale and shift). Any other
consumer, and every graph output, gets the value back in NCHW through a `transpose` (a view).
"""
from __future__ import annotations

import numpy as np

from ...ops.registry import all_ops
from ...symbol.graph import Node, Symbol
from .rewrite import consumers

_TO_NCHW = "(0, 3, 1, 2)"
NCHW_TO_NHWC_AXIS = {0: 0, 1: 3, 2: 1, 3: 2}

_ACT_OPS = {"Activation", "_npx_relu", "_npx_sigmoid", "softsign", "hard_sigmoid", "mish",
            "log_sigmoid", "clip", "LeakyReLU", "_hs_affine"}
_unary: set[str] | None = None
_binary: set[str] | None = None


def _op_sets() -> tuple[set[str], set[str]]:
    """Canonical names of the element-wise ops (unary maths, tensor-scalar, tensor-tensor)."""
    global _unary, _binary
    if _unary is None:
        from ...ops import binary
        ops = all_ops()
        _unary = {op.name for op in ops.values()
                  if getattr(op.kernel, "__module__", "").endswith("ops.elemwise")
                  and not callable(op.inputs) and len(op.inputs) == 1}
        _unary |= {row[0] for row in binary._SCALAR} | _ACT_OPS
        _binary = {row[0] for row in binary._ARITH}
    return _unary, _binary


def _fmt(t) -> str:
    return "(" + ", ".join(str(int(v)) for v in t) + ("," if len(t) == 1 else "") + ")"


def _used_outputs(sym: Symbol) -> set[tuple[int, int]]:
    used = {(id(n), i) for n, i in sym.outputs}
    for n in sym.topo():
        for src, i in n.inputs:
            used.add((id(src), i))
    return used


def bn_scale_shift(bn: Node, gamma, beta, mean, var):
    """(scale, shift) of an inference BatchNorm, computed in float64."""
    g = np.ones(mean.shape) if bn.parsed.fix_gamma else gamma.astype(np.float64)
    scale = g / np.sqrt(var.astype(np.float64) + bn.parsed.eps)
    shift = beta.astype(np.float64) - mean.astype(np.float64) * scale
    return scale, shift


def shares_weight(a) -> bool:
    """A 1x1, unpadded, ungrouped 2-D convolution: its GEMM operand is a view of MXNet's own
    weight, so the optimised graph shares the parameter (and an inference BatchNorm after it
    is applied as a per-channel scale rather than folded into a new weight)."""
    return (len(a.kernel) == 2 and tuple(a.kernel) == (1, 1) and not any(a.pad or (0, 0))
            and a.num_group == 1 and a.layout in (None, "NCHW"))


def to_channels_last(sym: Symbol, params: dict[str, np.ndarray],
                     data_shapes: dict[str, tuple] | None = None):
    from ...ops.nhwc import choose_algo, prepare_weight
    from ...symbol.infer import infer_shapes
    shapes = infer_shapes(sym, {**{k: v.shape for k, v in params.items()}, **data_shapes},
                          tolerant=True) if data_shapes else {}
    unary, binary = _op_sets()
    params = dict(params)
    used = _used_outputs(sym)
    uses = consumers(sym)
    done: dict[int, list] = {}
    nhwc: set[tuple[int, int]] = set()          # new entries holding NHWC values
    back: dict[tuple[int, int], tuple] = {}     # NHWC entry → its NCHW transpose entry

    def nchw(e):
        key = (id(e[0]), e[1])
        if key not in nhwc:
            return e
        if key not in back:
            t = Node("transpose", f"{e[0].name}_nchw{e[1]}", {"axes": _TO_NCHW})
            t.inputs = [e]
            back[key] = (t, 0)
        return back[key]

    def is_nhwc(e) -> bool:
        return (id(e[0]), e[1]) in nhwc

    def value(e):
        return params.get(e[0].name) if e[0].is_var else None

    def copy(n: Node, ins, attrs=None) -> Node:
        c = Node(n.opname, n.name, n.attrs if attrs is None else attrs, op=n.op)
        c.inputs = list(ins)
        c.control_deps = [done[id(d)][0][0] for d in n.control_deps]
        c.subgraphs = n.subgraphs
        if attrs is None:
            c._parsed = n._parsed
        return c

    def tagged(node: Node, k: int):
        ents = [(node, 0)] * k
        nhwc.add((id(node), 0))
        return ents

    def conv(n: Node, ins):
        a = n.parsed
        if len(a.kernel) != 2 or a.layout not in (None, "NCHW"):
            return None
        w = value(n.inputs[1])
        b = None if a.no_bias else value(n.inputs[2])
        if w is None or (not a.no_bias and b is None) or w.dtype.kind != "f" or w.ndim != 4:
            return None
        src = ins[0]
        layout = "NHWC" if is_nhwc(src) else "NCHW"
        if layout == "NCHW" and a.num_group != 1:
            return None                      # grouped convs of NCHW values stay as they are
        algo = choose_algo(w.shape, a.kernel, a.stride or (1, 1), a.pad or (0, 0),
                           a.dilate or (1, 1), a.num_group, layout,
                           shapes.get((id(n.inputs[0][0]), n.inputs[0][1])), w.dtype)
        if algo == "gemm" and layout == "NHWC" and shares_weight(a):
            algo, wentry = "gemm1x1", ins[1]      # the block's own weight, viewed transposed
        else:
            wname = f"{n.name}_hs_weight"
            params[wname] = prepare_weight(w, a.num_group, layout, algo)
            wentry = (Node("null", wname), 0)
        attrs = {"kernel": _fmt(a.kernel), "stride": _fmt(a.stride or (1, 1)),
                 "pad": _fmt(a.pad or (0, 0)), "dilate": _fmt(a.dilate or (1, 1)),
                 "num_filter": str(a.num_filter), "num_group": str(a.num_group),
                 "no_bias": "1" if a.no_bias else "0", "data_layout": layout, "algo": algo}
        for k in ("stride", "pad", "dilate"):
            t = getattr(a, k)
            if t and len(t) == 1:
                attrs[k] = _fmt(tuple(t) * 2)
        c = Node("_hs_conv2d", n.name, attrs)
        c.inputs = [src, wentry] + ([] if a.no_bias else [ins[2]])
        return tagged(c, 1)

    def scale_1x1(n: Node, conv_node: Node, scale, shift):
        """BatchNorm after a "gemm1x1" conv that only it reads: its scale becomes the conv's
        `scale` input and its shift joins the bias, leaving the shared weight untouched."""
        ca = conv_node.parsed
        b = 0.0 if ca.no_bias else value(conv_node.inputs[2]).astype(np.float64)
        dt = value(conv_node.inputs[1]).dtype
        sname, bname = f"{n.name}_hs_scale", f"{n.name}_hs_bias"
        params[sname], params[bname] = scale.astype(dt), (b * scale + shift).astype(dt)
        conv_node.attrs = {**conv_node.attrs, "with_scale": "1", "no_bias": "0"}
        conv_node._parsed = None
        conv_node.inputs = conv_node.inputs[:2] + [(Node("null", sname), 0),
                                                   (Node("null", bname), 0)]
        return [(conv_node, 0)] * n.num_outputs()

    def batchnorm(n: Node, ins):
        a = n.parsed
        if a.output_mean_var or any((id(n), i) in used for i in (1, 2)):
            return None
        stats = [value(e) for e in n.inputs[1:5]]
        if any(s is None for s in stats):
            return None
        ax = a.axis
        if is_nhwc(ins[0]):
            if ax not in (1, -3):
                return None
            ax = 3
        scale, shift = bn_scale_shift(n, *stats)
        prod = ins[0][0]
        if (ax == 3 and prod.opname == "_hs_conv2d" and prod.attrs.get("algo") == "gemm1x1"
                and not prod.parsed.with_scale and uses.get(id(n.inputs[0][0]), 0) == 1):
            return scale_1x1(n, prod, scale, shift)
        dt = stats[2].dtype if stats[2].dtype.kind == "f" else np.float32
        sname, tname = f"{n.name}_hs_scale", f"{n.name}_hs_shift"
        params[sname], params[tname] = scale.astype(dt), shift.astype(dt)
        c = Node("_hs_affine", n.name, {"axis": str(ax)})
        c.inputs = [ins[0], (Node("null", sname), 0), (Node("null", tname), 0)]
        ents = [(c, 0)] * 3
        if is_nhwc(ins[0]):
            nhwc.add((id(c), 0))
        return ents

    def visit(n: Node, ins):
        op = n.op.name
        if op == "Convolution":
            r = conv(n, ins)
            if r is not None:
                return r
        elif op == "BatchNorm":
            r = batchnorm(n, ins)
            if r is not None:
                return r
        elif ins and all(is_nhwc(e) for e in ins[:1]):
            a = n.parsed
            if (op == "Pooling" and a.layout in (None, "NCHW")
                    and a.pool_type in ("max", "avg", "sum")
                    and (a.global_pool or len(a.kernel) == 2)):
                attrs = dict(n.attrs)
                attrs["layout"] = "NHWC"
                return tagged(copy(n, ins, attrs), n.num_outputs())
            if op in unary and not (op == "LeakyReLU" and a.act_type == "prelu") and len(ins) == 1:
                c = copy(n, ins)
                for i in range(n.num_outputs()):
                    nhwc.add((id(c), i))
                return [(c, i) for i in range(n.num_outputs())]
            if op in binary and all(is_nhwc(e) for e in ins):
                return tagged(copy(n, ins), 1)
            if op in ("Concat", "_npi_concatenate") and all(is_nhwc(e) for e in ins):
                key = "dim" if op == "Concat" else "axis"
                ax = a.get(key, 1)
                if ax is not None and -4 <= ax < 4:
                    c = Node("_hs_concat", n.name, {"num_args": str(len(ins)),
                                                    "dim": str(NCHW_TO_NHWC_AXIS[ax % 4])})
                    c.inputs = list(ins)
                    return tagged(c, 1)
            if op == "Flatten" or (op == "FullyConnected" and a.flatten):
                src = n.inputs[0][0]
                if src.op is not None and src.op.name == "Pooling" and src.parsed.global_pool:
                    # (N, 1, 1, C) flattens exactly like (N, C, 1, 1)
                    return [(copy(n, ins), i) for i in range(n.num_outputs())]
        c = copy(n, [nchw(e) for e in ins])
        return [(c, i) for i in range(n.num_outputs())]

    for n in sym.topo():
        if n.is_var:
            c = Node(n.opname, n.name, n.attrs)
            c._parsed = n._parsed
            done[id(n)] = [(c, 0)]
            continue
        ins = [done[id(src)][i] for src, i in n.inputs]
        done[id(n)] = visit(n, ins)
    del uses
    out = Symbol([nchw(done[id(n)][i]) for n, i in sym.outputs])
    names = set(out.list_inputs())
    return out, {k: v for k, v in params.items() if k in names}
