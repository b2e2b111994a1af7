"""MXNet 1.9.1's quantization pass over a fused float graph (`quantize_graph` + `calib_graph` +
the oneDNN post-quantization fusions), written as one rebuild:

* every node with an INT8 form (`OpDef.quantized_as`, and the fused conv/FC nodes) that is not
  excluded becomes `quantized_<name>`; 'smart' mode keeps an optional one (pooling, flatten,
  concat, …) only between two convolutions/FCs;
* float entries entering it get `_contrib_quantize_v2` (`<entry>_quantize`, one per entry) —
  FC weights and biases are quantized offline into `<param>_quantize[_min|_max]` variables;
* quantized outputs read by float nodes or graph outputs get `_contrib_dequantize`;
* a fused conv/FC outputs int32 unless calibrated: then the calibrated range is its own attribute
  (MXNet fuses the requantize), and an FC read only in float gets `enable_float_output` instead
  of a dequantize; uncalibrated, `_contrib_requantize` follows;
* a quantized concat's calibrated inputs share one range (the union), as oneDNN aligns them.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...compiler.passes.rewrite import rebuild
from ...ops.registry import get_op, has_op
from ...symbol.graph import Node, Symbol
from .fuse import _entry_name

Entry = tuple
Range = tuple  # (min, max)
MODES = ("full", "smart")


def _op(name: str):
    return get_op(name)


def _fused(n: Node) -> bool:
    return not n.is_var and n.op in (_op("_sg_mkldnn_conv"), _op("_sg_mkldnn_fully_connected"))


def _is_fc(n: Node) -> bool:
    return not n.is_var and n.op is _op("_sg_mkldnn_fully_connected")


# the INT8 LSTM reads its data as asymmetric uint8 (`_contrib_quantize_asym`), its parameters and
# states in float, and outputs float (MXNet's FNeedAsymQuantizeInput / FAvoidDequantizeOutput)
QUANTIZED_RNN = "_contrib_quantized_rnn"


def quantized_form(n: Node) -> str | None:
    """The INT8 operator standing for `n` (MXNet's FQuantizedOp), or None."""
    if n.is_var:
        return None
    if _fused(n):
        return n.op.name
    q = n.op.quantized_as
    return q(n.parsed) if callable(q) else q


@dataclass
class Plan:
    """What the pass decided before any node is built: which nodes run INT8, and which float
    entries need a calibrated range (keyed by MXNet's entry names)."""
    quantized: set[int] = field(default_factory=set)
    calib: dict[str, Entry] = field(default_factory=dict)


def calibrates_output(n: Node) -> bool:
    """Whether `n`'s INT8 form takes its own output range as attributes (MXNet's
    FNeedCalibrateOutput: the fused conv/FC, quantized elemwise_add)."""
    q = quantized_form(n)
    return q is not None and "min_calib_range" in _op(q).attrs


def _excluded(n: Node, names: set[str], ops: set) -> bool:
    """`ops`: the excluded operators' OpDefs (a fused node is its own operator, as in MXNet:
    excluding Convolution leaves `_sg_mkldnn_conv` quantized)."""
    if n.name in names or n.op in ops:
        return True
    return any(m.name in names for g in n.subgraphs for m in g.topo() if not m.is_var)


def _smart(sym: Symbol, marked: set[int]) -> set[int]:
    """'smart': an optional INT8 node stays only on a path between two convolutions/FCs."""
    nodes = {id(n): n for n in sym.topo()}
    readers: dict[int, list[int]] = {}
    for n in nodes.values():
        for s, _ in n.inputs:
            readers.setdefault(id(s), []).append(id(n))
    must = {k for k in marked
            if _fused(nodes[k]) or needs_requantize(nodes[k]) or _float_out(nodes[k])}
    support = marked - must

    def reach(step) -> set[int]:
        seen, todo = set(), list(must)
        while todo:
            for nxt in step(todo.pop()):
                if nxt in support and nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen
    up = reach(lambda k: [id(s) for s, _ in nodes[k].inputs])
    down = reach(lambda k: readers.get(k, []))
    return must | (up & down)


def needs_requantize(n: Node) -> bool:
    """An un-fused INT8 layer that outputs int32 levels and takes no range of its own: MXNet's
    quantize pass follows it with a `_contrib_requantize` (its FNeedRequantize), which
    calibration later gives a range."""
    q = quantized_form(n)
    if q is None or _fused(n) or "min_calib_range" in _op(q).attrs:
        return False
    qop = _op(q)
    names = qop.input_names(qop.parse_attrs(n.attrs))
    return qop.infer_type(qop.parse_attrs(n.attrs), [np.dtype(np.uint8)] * len(names))[0] == \
        np.int32


def _float_out(n: Node) -> bool:
    """A quantized node whose outputs are float (the INT8 LSTM)."""
    return quantized_form(n) == QUANTIZED_RNN


def _avoided(n: Node, k: int, granularity: str = "tensor-wise") -> bool:
    """Inputs a quantized node reads in float (a fused conv's weights and BatchNorm; a
    channel-wise fused FC's weight and bias, which it quantizes per output row itself; the
    INT8 LSTM's parameters and states)."""
    if _float_out(n):
        return k != 0
    if _is_fc(n):
        return granularity == "channel-wise" and k in (1, 2)
    if not _fused(n):
        return False
    return k != 0 and not (n.parsed.with_sum and k == len(n.inputs) - 1)


def plan(sym: Symbol, excluded_names: set[str], excluded_ops: set[str], mode: str,
         offline: set[str], granularity: str = "tensor-wise") -> Plan:
    p = Plan()
    excluded_ops = {get_op(o) for o in excluded_ops if has_op(o)}     # MXNet ignores unknown
    marked = {id(n) for n in sym.topo()
              if quantized_form(n) and not _excluded(n, excluded_names, excluded_ops)}
    p.quantized = _smart(sym, marked) if mode == "smart" else marked
    for n in sym.topo():
        if id(n) not in p.quantized:
            continue
        if calibrates_output(n) or needs_requantize(n):
            p.calib[_entry_name(n, 0)] = (n, 0)
        for k, (src, i) in enumerate(n.inputs):
            if _avoided(n, k, granularity) or (id(src) in p.quantized and not _float_out(src)) \
                    or (src.is_var and src.name in offline):
                continue
            p.calib[_entry_name(src, i)] = (src, i)
    return p


def fmt(v: float) -> str:
    return "%f" % np.float32(v)               # MXNet writes std::to_string(float)


class _Builder:
    def __init__(self, sym: Symbol, p: Plan, ranges: dict[str, Range] | None, dtype: str,
                 offline: set[str], granularity: str):
        self.p, self.ranges, self.dtype, self.offline = p, ranges or {}, dtype, offline
        self.granularity = granularity
        self.mirror: dict[int, Node] = {}       # id(old quantized node) -> node giving q outputs
        self.quantize: dict[tuple, Node] = {}
        self.dequantize: dict[int, Node] = {}
        self.float_out: dict[int, Node] = {}    # FC that outputs float itself
        readers: dict[int, list[Node]] = {}
        for n in sym.topo():
            for s, _ in n.inputs:
                readers.setdefault(id(s), []).append(n)
        self.readers = readers

    def _range_attrs(self, name: str) -> dict[str, str]:
        r = self.ranges.get(name)
        return {} if r is None else {"min_calib_range": fmt(r[0]), "max_calib_range": fmt(r[1])}

    def _quantize_entry(self, src: Node, i: int, new: Entry, asym: bool = False) -> list[Entry]:
        key = (id(new[0]), new[1], asym)
        if src.is_var and src.name in self.offline:
            base = f"{src.name}_quantize"
            vs = [Node("null", base), Node("null", base + "_min"), Node("null", base + "_max")]
            return [(v, 0) for v in vs]
        if key not in self.quantize:
            suffix = "" if src.is_var else "_" + (str(i) if src.op.monitor_indexed_outputs
                                                  else src.op.output_name(src.parsed, i))
            attrs = {} if asym else {"out_type": self.dtype}
            attrs.update(self._range_attrs(_entry_name(src, i)))
            opname = "_contrib_quantize_asym" if asym else "_contrib_quantize_v2"
            self.quantize[key] = Node(opname, f"{src.name}{suffix}_quantize", attrs, [new],
                                      op=_op(opname))
        qn = self.quantize[key]
        return [(qn, 0), (qn, 1), (qn, 2)]

    def quantized_node(self, n: Node, ins: list[Entry]) -> list[Entry]:
        data, extra = [], []
        for k, ((src, i), new) in enumerate(zip(n.inputs, ins)):
            if _avoided(n, k, self.granularity):
                data.append(new)
                continue
            if id(src) in self.p.quantized and not _float_out(src):
                m = self.mirror[id(src)]
                q = [(m, 0), (m, 1), (m, 2)]
            else:
                q = self._quantize_entry(src, i, new, asym=_float_out(n))
            data.append(q[0])
            extra += q[1:]
        attrs, opname = dict(n.attrs), quantized_form(n)
        if opname == QUANTIZED_RNN:
            attrs["quantized"] = "true"
        if _fused(n):
            attrs["quantized"] = "True" if _is_fc(n) else "true"
        if _is_fc(n) and self.granularity == "channel-wise":
            attrs["channel_wise_quantize"] = "True"
        out_name = _entry_name(n, 0)
        calibrated = calibrates_output(n) and out_name in self.ranges
        float_only = not any(id(r) in self.p.quantized for r in self.readers.get(id(n), []))
        if calibrated and _is_fc(n) and float_only:
            attrs["enable_float_output"] = "True"
        elif calibrated:
            attrs.update(self._range_attrs(out_name))
        q = Node(opname, f"quantized_{n.name}", attrs, data + extra, op=_op(opname))
        q.subgraphs = n.subgraphs
        if opname == QUANTIZED_RNN:
            self.float_out[id(n)] = self.mirror[id(n)] = q
            return [(q, i) for i in range(q.num_outputs())]
        if "enable_float_output" in attrs:
            self.float_out[id(n)] = q
        self.mirror[id(n)] = q
        if (_fused(n) and not calibrated) or needs_requantize(n):
            self.mirror[id(n)] = Node("_contrib_requantize", f"requantize_{n.name}",
                                      {"out_type": self.dtype}, [(q, 0), (q, 1), (q, 2)],
                                      op=_op("_contrib_requantize"))
        return [(self.mirror[id(n)], 0)]

    def float_entry(self, src: Node, i: int, new: Entry) -> Entry:
        """What a float reader of `src` output i reads (a dequantize of a quantized node)."""
        if id(src) not in self.p.quantized:
            return new
        if id(src) in self.float_out:
            return (self.float_out[id(src)], i)
        if id(src) not in self.dequantize:
            m = self.mirror[id(src)]
            self.dequantize[id(src)] = Node("_contrib_dequantize", f"{src.name}_dequantize", {},
                                            [(m, 0), (m, 1), (m, 2)],
                                            op=_op("_contrib_dequantize"))
        return (self.dequantize[id(src)], 0)


def build(sym: Symbol, p: Plan, ranges: dict[str, Range] | None, quantized_dtype: str,
          offline: set[str], granularity: str = "tensor-wise") -> Symbol:
    """The quantized graph (`ranges`: calibrated entries; None or empty: calib_mode 'none')."""
    b = _Builder(sym, p, ranges, quantized_dtype, offline, granularity)

    def visit(n: Node, ins, done):
        if n.is_var:
            return None
        if id(n) in p.quantized:
            return b.quantized_node(n, ins)
        fins = [b.float_entry(s, i, e) for (s, i), e in zip(n.inputs, ins)]
        c = Node(n.opname, n.name, n.attrs, fins, op=n.op)
        c.subgraphs, c._parsed = n.subgraphs, n._parsed
        return [(c, i) for i in range(n.num_outputs())]

    out = rebuild(sym, visit)
    heads = [b.float_entry(old, i, new) for (old, i), new in zip(sym.outputs, out.outputs)]
    return align_concat_ranges(Symbol(heads))


def align_concat_ranges(sym: Symbol) -> Symbol:
    """Inputs of a quantized concat that carry calibrated ranges and feed only it share their
    union range (oneDNN concatenates int8 data without rescaling)."""
    readers: dict[int, set[int]] = {}
    for n in sym.topo():
        for s, _ in n.inputs:
            readers.setdefault(id(s), set()).add(id(n))
    heads = {id(n) for n, _ in sym.outputs}
    concat = _op("_contrib_quantized_concat")
    for n in sym.topo():
        if n.is_var or n.op is not concat:
            continue
        srcs = dict.fromkeys(s for s, _ in n.inputs[:n.parsed.num_args])
        tagged = [s for s in srcs if "min_calib_range" in s.attrs
                  and readers.get(id(s)) == {id(n)} and id(s) not in heads]
        if len(tagged) < 2:
            continue
        lo = min(float(s.attrs["min_calib_range"]) for s in tagged)
        hi = max(float(s.attrs["max_calib_range"]) for s in tagged)
        for s in tagged:
            s.attrs.update(min_calib_range=fmt(lo), max_calib_range=fmt(hi))
            s._parsed = None
    return sym
