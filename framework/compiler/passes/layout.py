"""Channels-last (NHWC) internal layout for 2-D convolutional graphs.

Every 2-D Convolution with known weights becomes `_hs_conv2d` (ops/compiled/nhwc.py): it reads NHWC
data (or the NCHW graph input directly), writes NHWC, and its weight parameter is rewritten once,
here, into the GEMM-ready layout — so im2col copies contiguous channel vectors, 1x1 convolutions
are plain GEMMs and no kernel transposes anything per call. Layout-agnostic consumers keep the
NHWC value: element-wise ops (`OpDef.elementwise`, when all their inputs are NHWC — operands are
then permuted alike, so broadcasting is unchanged), 2-D Pooling (its `layout`
becomes NHWC), BatchNorm over the channel axis and Concat (their axis is remapped). Inference
BatchNorms that could not be folded become `_hs_affine` (precomputed scale and shift). Any other
consumer, and every graph output, gets the value back in NCHW through a `transpose` (a view).
"""
from __future__ import annotations

import numpy as np

from ...ops.nn.conv import convolution as CONVOLUTION
from ...ops.compiled.nhwc import choose_algo, hs_conv2d as HS_CONV2D, prepare_weight
from ...ops.compiled.nhwc_eltwise import hs_affine as HS_AFFINE, hs_concat as HS_CONCAT
from ...ops.nn.dense import fully_connected as FULLY_CONNECTED
from ...ops.nn.norm import batch_norm as BATCH_NORM
from ...ops.nn.pool import pooling as POOLING
from ...ops.tensor.reshape import flatten as FLATTEN
from ...ops.tensor.shape import concat as CONCAT, np_concatenate as NP_CONCATENATE, transpose as TRANSPOSE
from ...symbol.graph import Node, Symbol
from ...symbol.infer import infer_shapes
from .rewrite import consumers, copy_node, entries, rebuild

_TO_NCHW = "(0, 3, 1, 2)"
NCHW_TO_NHWC_AXIS = {0: 0, 1: 3, 2: 1, 3: 2}


def _fmt(t) -> str:
    return "(" + ", ".join(str(int(v)) for v in t) + ("," if len(t) == 1 else "") + ")"


def _param(name: str) -> tuple:
    return (Node("null", name), 0)


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
    """The graph in channels-last form, and its parameters (rewritten weights included).
    `data_shapes` (example input shapes) let each convolution pick its algorithm."""
    run = _ChannelsLast(sym, params, data_shapes)
    out = rebuild(sym, run.visit, output=run.nchw)
    names = set(out.list_inputs())
    return out, {k: v for k, v in run.params.items() if k in names}


class _ChannelsLast:
    """One run of the pass: a list of rules over the graph, with what they share — the
    parameter values, which new entries hold NHWC values, and their NCHW transposes."""

    def __init__(self, sym: Symbol, params: dict, data_shapes: dict | None):
        self.shapes = infer_shapes(sym, {**{k: v.shape for k, v in params.items()}, **data_shapes},
                                   tolerant=True) if data_shapes else {}
        self.params = dict(params)
        self.used = _used_outputs(sym)
        self.uses = consumers(sym)
        self.nhwc: set[tuple[int, int]] = set()       # new entries holding NHWC values
        self.back: dict[tuple[int, int], tuple] = {}  # NHWC entry → its NCHW transpose entry
        self.rules = (self.conv, self.batchnorm, self.pooling, self.elementwise, self.concat,
                      self.flatten)

    # -- shared ---------------------------------------------------------------------------------
    def visit(self, n: Node, ins, done):
        if n.is_var:
            return None
        for rule in self.rules:
            r = rule(n, ins, done)
            if r is not None:
                return r
        return entries(copy_node(n, [self.nchw(e) for e in ins], done), n.num_outputs())

    def nchw(self, e):
        key = (id(e[0]), e[1])
        if key not in self.nhwc:
            return e
        if key not in self.back:
            t = Node(TRANSPOSE.name, f"{e[0].name}_nchw{e[1]}", {"axes": _TO_NCHW}, [e],
                     op=TRANSPOSE)
            self.back[key] = (t, 0)
        return self.back[key]

    def is_nhwc(self, e) -> bool:
        return (id(e[0]), e[1]) in self.nhwc

    def value(self, e):
        return self.params.get(e[0].name) if e[0].is_var else None

    def tagged(self, node: Node, k: int, all_outputs: bool = False) -> list:
        """`k` entries of `node` holding NHWC values (output 0 repeated, or each output)."""
        ents = entries(node, k) if all_outputs else [(node, 0)] * k
        self.nhwc.update((id(c), i) for c, i in ents)
        return ents

    # -- rules: each returns the node's new entries, or None when it does not apply ---------------
    def conv(self, n: Node, ins, done):
        if n.op is not CONVOLUTION:
            return None
        a = n.parsed
        if len(a.kernel) != 2 or a.layout not in (None, "NCHW"):
            return None
        w = self.value(n.inputs[1])
        b = None if a.no_bias else self.value(n.inputs[2])
        if w is None or (not a.no_bias and b is None) or w.dtype.kind != "f" or w.ndim != 4:
            return None
        layout = "NHWC" if self.is_nhwc(ins[0]) else "NCHW"
        if layout == "NCHW" and a.num_group != 1:
            return None                      # grouped convs of NCHW values stay as they are
        algo = choose_algo(w.shape, a.kernel, a.stride or (1, 1), a.pad or (0, 0),
                           a.dilate or (1, 1), a.num_group, layout,
                           self.shapes.get((id(n.inputs[0][0]), n.inputs[0][1])), w.dtype)
        if algo == "gemm" and layout == "NHWC" and shares_weight(a):
            algo, wentry = "gemm1x1", ins[1]      # the block's own weight, viewed transposed
        else:
            wname = f"{n.name}_hs_weight"
            self.params[wname] = prepare_weight(w, a.num_group, layout, algo)
            wentry = _param(wname)
        attrs = _conv_attrs(a, layout, algo)
        c = Node(HS_CONV2D.name, n.name, attrs, [ins[0], wentry] + ([] if a.no_bias else [ins[2]]),
                 op=HS_CONV2D)
        return self.tagged(c, 1)

    def batchnorm(self, n: Node, ins, done):
        if n.op is not BATCH_NORM:
            return None
        a = n.parsed
        if a.output_mean_var or any((id(n), i) in self.used for i in (1, 2)):
            return None
        stats = [self.value(e) for e in n.inputs[1:5]]
        if any(s is None for s in stats):
            return None
        ax = a.axis
        if self.is_nhwc(ins[0]):
            if ax not in (1, -3):
                return None
            ax = 3
        scale, shift = bn_scale_shift(n, *stats)
        prod = ins[0][0]
        if (ax == 3 and prod.op is HS_CONV2D and prod.attrs.get("algo") == "gemm1x1"
                and not prod.parsed.with_scale and self.uses.get(id(n.inputs[0][0]), 0) == 1):
            return self.scale_1x1(n, prod, scale, shift)
        dt = stats[2].dtype if stats[2].dtype.kind == "f" else np.float32
        sname, tname = f"{n.name}_hs_scale", f"{n.name}_hs_shift"
        self.params[sname], self.params[tname] = scale.astype(dt), shift.astype(dt)
        c = Node(HS_AFFINE.name, n.name, {"axis": str(ax)},
                 [ins[0], _param(sname), _param(tname)], op=HS_AFFINE)
        if self.is_nhwc(ins[0]):
            self.nhwc.add((id(c), 0))
        return [(c, 0)] * 3

    def scale_1x1(self, n: Node, conv_node: Node, scale, shift):
        """BatchNorm after a "gemm1x1" conv that only it reads: its scale becomes the conv's
        `scale` input and its shift joins the bias, leaving the shared weight untouched."""
        ca = conv_node.parsed
        b = 0.0 if ca.no_bias else self.value(conv_node.inputs[2]).astype(np.float64)
        dt = self.value(conv_node.inputs[1]).dtype
        sname, bname = f"{n.name}_hs_scale", f"{n.name}_hs_bias"
        self.params[sname], self.params[bname] = scale.astype(dt), (b * scale + shift).astype(dt)
        conv_node.attrs = {**conv_node.attrs, "with_scale": "1", "no_bias": "0"}
        conv_node._parsed = None
        conv_node.inputs = conv_node.inputs[:2] + [_param(sname), _param(bname)]
        return [(conv_node, 0)] * n.num_outputs()

    def pooling(self, n: Node, ins, done):
        if n.op is not POOLING or not (ins and self.is_nhwc(ins[0])):
            return None
        a = n.parsed
        if (a.layout in (None, "NCHW") and a.pool_type in ("max", "avg", "sum")
                and (a.global_pool or len(a.kernel) == 2)):
            return self.tagged(copy_node(n, ins, done, {**n.attrs, "layout": "NHWC"}),
                               n.num_outputs())
        return None

    def elementwise(self, n: Node, ins, done):
        if ins and n.op.is_elementwise(n.parsed) and all(self.is_nhwc(e) for e in ins):
            return self.tagged(copy_node(n, ins, done), n.num_outputs(), all_outputs=True)
        return None

    def concat(self, n: Node, ins, done):
        if n.op not in (CONCAT, NP_CONCATENATE) or not (ins and all(self.is_nhwc(e) for e in ins)):
            return None
        ax = n.parsed.get("dim" if n.op is CONCAT else "axis", 1)
        if ax is None or not -4 <= ax < 4:
            return None
        c = Node(HS_CONCAT.name, n.name, {"num_args": str(len(ins)),
                                          "dim": str(NCHW_TO_NHWC_AXIS[ax % 4])}, ins, op=HS_CONCAT)
        return self.tagged(c, 1)

    def flatten(self, n: Node, ins, done):
        """(N, 1, 1, C) after a global pooling flattens exactly like (N, C, 1, 1)."""
        if not (ins and self.is_nhwc(ins[0])):
            return None
        if n.op is FLATTEN or (n.op is FULLY_CONNECTED and n.parsed.flatten):
            src = n.inputs[0][0]
            if src.op is POOLING and src.parsed.global_pool:
                return entries(copy_node(n, ins, done), n.num_outputs())
        return None


def _conv_attrs(a, layout: str, algo: str) -> dict[str, str]:
    """`_hs_conv2d`'s attributes for a 2-D Convolution's parsed `a` (1-D tuples doubled)."""
    attrs = {"kernel": _fmt(a.kernel), "stride": _fmt(a.stride or (1, 1)),
             "pad": _fmt(a.pad or (0, 0)), "dilate": _fmt(a.dilate or (1, 1)),
             "num_filter": str(a.num_filter), "num_group": str(a.num_group),
             "no_bias": "1" if a.no_bias else "0", "data_layout": layout, "algo": algo}
    for k in ("stride", "pad", "dilate"):
        t = getattr(a, k)
        if t and len(t) == 1:
            attrs[k] = _fmt(tuple(t) * 2)
    return attrs
