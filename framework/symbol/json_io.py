"""Read and write MXNet symbol JSON, every version (0.8 `param`/`attr` layouts to 2.x).

The reader validates everything a hostile file could abuse: sizes, node counts, entry indices
(every input must refer to an earlier node, which also rules out cycles), types of every field,
and unknown operators (named with their node and the nearest supported names). It then applies
MXNet's legacy upgrades so old graphs come out as MXNet itself would load them.
"""
from __future__ import annotations

import json
from typing import Any

from ..base import GraphFormatError
from ..ops.groups import OpGroup
from ..ops.registry import get_op
from .graph import Node, Symbol

MAX_JSON_BYTES = 256 * 1024 * 1024
MAX_NODES = 1_000_000
CURRENT_VERSION = 20000
_NODE_KEYS = {"op", "name", "attrs", "attr", "param", "inputs", "control_deps", "subgraphs",
              "backward_source_id"}
_TOP_KEYS = {"nodes", "arg_nodes", "node_row_ptr", "heads", "attrs"}
_HIDDEN = ("ctx_group", "lr_mult", "wd_mult", "force_mirroring", "mirror_stage", "profiler_scope")


def load_json(text: str | bytes, *, max_nodes: int = MAX_NODES,
              max_bytes: int = MAX_JSON_BYTES) -> Symbol:
    """Parse a symbol JSON document into a `Symbol`."""
    if len(text) > max_bytes:
        raise GraphFormatError(f"symbol JSON is {len(text)} bytes, over the limit of {max_bytes}")
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError) as e:
        raise GraphFormatError(f"symbol file is not valid JSON: {e}") from None
    return from_dict(doc, max_nodes=max_nodes)


def load(fname: str, **kw) -> Symbol:
    with open(fname, "rb") as f:
        return load_json(f.read(), **kw)


def _entry(raw: Any, limit: int, where: str) -> tuple[int, int]:
    if (not isinstance(raw, list) or len(raw) not in (2, 3)
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in raw)):
        raise GraphFormatError(f"{where}: an entry must be [node_id, output_index(, version)], got {raw!r}"[:300])
    nid, idx = raw[0], raw[1]
    if not 0 <= nid < limit:
        raise GraphFormatError(f"{where}: entry refers to node {nid}, which is not an earlier node "
                               "(dangling reference or cycle)")
    if idx < 0:
        raise GraphFormatError(f"{where}: negative output index {idx}")
    return nid, idx


def _str_dict(d: Any, where: str) -> dict[str, str]:
    if not isinstance(d, dict):
        raise GraphFormatError(f"{where}: attributes must be an object")
    out = {}
    for k, v in d.items():
        if isinstance(v, (dict, list)):
            raise GraphFormatError(f"{where}: attribute {k!r} must be a string")
        out[str(k)] = v if isinstance(v, str) else ("1" if v is True else "0" if v is False else str(v))
    return out


def _version(attrs: Any) -> int:
    if not isinstance(attrs, dict) or "mxnet_version" not in attrs:
        return 800
    v = attrs["mxnet_version"]
    if isinstance(v, list) and len(v) == 2 and v[0] == "int" and isinstance(v[1], int):
        return v[1]
    raise GraphFormatError(f"graph attribute mxnet_version must be [\"int\", N], got {v!r}"[:200])


def from_dict(doc: Any, *, max_nodes: int = MAX_NODES) -> Symbol:
    if not isinstance(doc, dict):
        raise GraphFormatError("symbol JSON must be an object with 'nodes' and 'heads'")
    extra = set(doc) - _TOP_KEYS
    if extra:
        raise GraphFormatError(f"symbol JSON: Unknown field {sorted(extra)[0]}, candidates are: "
                               + ", ".join(sorted(_TOP_KEYS)))
    raw_nodes, heads = doc.get("nodes"), doc.get("heads")
    if not isinstance(raw_nodes, list) or not isinstance(heads, list):
        raise GraphFormatError("symbol JSON needs a 'nodes' list and a 'heads' list")
    if len(raw_nodes) > max_nodes:
        raise GraphFormatError(f"graph has {len(raw_nodes)} nodes, over the limit of {max_nodes}")
    if not heads:
        raise GraphFormatError("symbol JSON has no heads (outputs)")
    version = _version(doc.get("attrs"))
    nodes: list[Node] = []
    for i, rn in enumerate(raw_nodes):
        nodes.append(_node(rn, i, nodes, version))
    arg_nodes = doc.get("arg_nodes", [])
    if not isinstance(arg_nodes, list):
        raise GraphFormatError("arg_nodes must be a list")
    for a in arg_nodes:
        if not isinstance(a, int) or not 0 <= a < len(nodes) or not nodes[a].is_var:
            raise GraphFormatError(f"arg_nodes entry {a!r} is not a variable node")
    outs = []
    for h in heads:
        nid, idx = _entry(h, len(nodes), "heads")
        if idx >= nodes[nid].num_visible() and idx >= nodes[nid].num_outputs():
            raise GraphFormatError(f"heads: node '{nodes[nid].name}' has no output {idx}")
        outs.append((nodes[nid], idx))
    return Symbol(outs)


def _node(rn: Any, i: int, nodes: list[Node], version: int) -> Node:
    where = f"node {i}"
    if not isinstance(rn, dict):
        raise GraphFormatError(f"{where}: must be an object")
    extra = set(rn) - _NODE_KEYS
    if extra:
        raise GraphFormatError(f"{where}: Unknown field {sorted(extra)[0]}")
    op, name = rn.get("op"), rn.get("name")
    if not isinstance(op, str) or not isinstance(name, str):
        raise GraphFormatError(f"{where}: 'op' and 'name' must be strings")
    where = f"node {i} '{name}' (op {op})"
    attrs: dict[str, str] = {}
    for key in ("attrs", "attr"):       # whichever appears later in the text wins entirely
        pass
    for key in rn:
        if key in ("attrs", "attr"):
            attrs = _str_dict(rn[key], where)
    if "param" in rn:
        for k, v in _str_dict(rn["param"], where).items():
            attrs.setdefault(k, v)
    raw_inputs = rn.get("inputs", [])
    if not isinstance(raw_inputs, list):
        raise GraphFormatError(f"{where}: 'inputs' must be a list")
    inputs = []
    for e in raw_inputs:
        nid, idx = _entry(e, i, where)
        if idx >= nodes[nid].num_outputs():
            raise GraphFormatError(f"{where}: input refers to output {idx} of node "
                                   f"'{nodes[nid].name}', which has {nodes[nid].num_outputs()}")
        inputs.append((nodes[nid], idx))
    if op == "null":
        if inputs:
            raise GraphFormatError(f"{where}: a variable cannot have inputs")
        attrs = _fix_hidden_keys(attrs)
        node = Node("null", name, attrs)
    else:
        opdef = get_op(op, node=name)
        attrs = _fix_hidden_keys(attrs, inputs, opdef)
        node = Node(op, name, attrs, inputs, op=opdef)
        node.subgraphs = _subgraphs(rn, where)   # before parsing: fused nodes read theirs
        _ = node.parsed                    # validate attributes now, naming the node on error
        _upgrade(node, version)
    deps = rn.get("control_deps", [])
    if not isinstance(deps, list) or not all(isinstance(d, int) and 0 <= d < i for d in deps):
        raise GraphFormatError(f"{where}: control_deps must refer to earlier nodes")
    node.control_deps = [nodes[d] for d in deps]
    return node


def _subgraphs(rn: dict, where: str) -> list:
    if not rn.get("subgraphs"):
        return []
    if not isinstance(rn["subgraphs"], list):
        raise GraphFormatError(f"{where}: subgraphs must be a list")
    return [from_dict(g) for g in rn["subgraphs"]]


def _fix_hidden_keys(attrs: dict[str, str], inputs=(), opdef=None) -> dict[str, str]:
    """MXNet's FixParsing: `lr_mult` → `__lr_mult__`; `weight_lr_mult` on an op moves to its input."""
    out = {}
    for k, v in attrs.items():
        moved = False
        for h in _HIDDEN:
            if k == h:
                out[f"__{h}__"] = v
                moved = True
            elif k.endswith("_" + h) and opdef is not None:
                arg = k[: -len(h) - 1]
                try:
                    names = opdef.input_names(opdef.parse_attrs(
                        {a: b for a, b in attrs.items() if a in opdef.attrs}))
                except Exception:
                    names = []
                if arg in names and names.index(arg) < len(inputs) and inputs[names.index(arg)][0].is_var:
                    inputs[names.index(arg)][0].attrs[f"__{h}__"] = v
                    moved = True
            if moved:
                break
        if not moved:
            out[k] = v
    return out


def _upgrade(node: Node, version: int) -> None:
    op = node.op
    if version < 900 and op.aux:
        names = op.input_names(node.parsed)
        while len(node.inputs) < len(names):     # 0.8 BatchNorm had no moving-stat inputs
            v = Node("null", f"{node.name}_{names[len(node.inputs)]}", dict(node.attrs))
            node.inputs.append((v, 0))
    if version < 904 and op.aux:                 # 0.9.4 gave moving statistics their init
        for pos, init in zip(op.aux_of(node.parsed), ('["zero", {}]', '["one", {}]')):
            if pos < len(node.inputs) and node.inputs[pos][0].is_var:
                node.inputs[pos][0].attrs.setdefault("__init__", init)
    if op.upgrade is not None:
        op.upgrade(version, node.attrs)
        node._parsed = None


def to_dict(sym: Symbol, *, remove_amp_cast: bool = True, version: int = CURRENT_VERSION,
            np_shape: bool = True) -> dict:
    if remove_amp_cast:
        sym = _strip_amp_cast(sym)
    order = sym.topo()
    index = {id(n): i for i, n in enumerate(order)}
    out_nodes, row_ptr = [], [0]
    for n in order:
        op = n.op.mx2_name if version >= 20000 and not n.is_var and n.op.mx2_name else n.opname
        d: dict[str, Any] = {"op": op, "name": n.name}
        if n.attrs:
            d["attrs"] = {k: n.attrs[k] for k in sorted(n.attrs)}
        d["inputs"] = [_Entry((index[id(src)], idx, 0)) for src, idx in n.inputs]
        if n.control_deps:
            d["control_deps"] = [index[id(c)] for c in n.control_deps]
        if n.subgraphs:
            d["subgraphs"] = [to_dict(g, version=version) for g in n.subgraphs]
        out_nodes.append(d)
        row_ptr.append(row_ptr[-1] + n.num_outputs())
    attrs: dict[str, Any] = {}
    if np_shape:
        attrs["is_np_shape"] = _Entry(("int", 1))
    attrs["mxnet_version"] = _Entry(("int", version))
    return {"nodes": out_nodes,
            "arg_nodes": [i for i, n in enumerate(order) if n.is_var],
            "node_row_ptr": row_ptr,
            "heads": [_Entry((index[id(n)], i, 0)) for n, i in sym.outputs],
            "attrs": attrs}


class _Entry(tuple):
    """A fixed-size record (node entry, typed graph attr): always written on one line."""


def _dmlc(v: Any, level: int) -> str:
    """dmlc::JSONWriter layout, which MXNet uses: items separated by ", " + newline, objects with
    more than one key and arrays of records or of more than 10 numbers are multi-line."""
    if isinstance(v, _Entry):
        return "[" + ", ".join(_dmlc(x, level + 1) for x in v) + "]"
    if isinstance(v, dict):
        items = [f"{_dmlc_str(str(k))}: {_dmlc(x, level + 1)}" for k, x in v.items()]
        multi = len(v) > 1 or level == 0 or any(isinstance(x, (dict, list)) and not
                                                 isinstance(x, _Entry) for x in v.values())
        return _join("{", "}", items, multi and bool(items), level)
    if isinstance(v, list):
        items = [_dmlc(x, level + 1) for x in v]
        multi = len(v) > 10 or any(isinstance(x, dict) for x in v)
        return _join("[", "]", items, multi and bool(items), level)
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return _dmlc_str(v)
    return str(v)


def _join(open_: str, close: str, items: list[str], multi: bool, level: int) -> str:
    if not multi:
        return open_ + ", ".join(items) + close
    pad = "\n" + "  " * (level + 1)
    return open_ + pad + (", " + pad).join(items) + "\n" + "  " * level + close


def _dmlc_str(s: str) -> str:
    return '"' + s.translate({13: "\\r", 10: "\\n", 92: "\\\\", 9: "\\t", 34: '\\"'}) + '"'


def to_json(sym: Symbol, *, remove_amp_cast: bool = True, version: int = CURRENT_VERSION,
            np_shape: bool = True) -> str:
    """MXNet's graph JSON, byte-compatible with what MXNet 2.x writes (`tojson`, `export`)."""
    return _dmlc(to_dict(sym, remove_amp_cast=remove_amp_cast, version=version,
                         np_shape=np_shape), 0)


def _amp(n: Node) -> bool:
    return not n.is_var and n.op.name in OpGroup.AMP


def _strip_amp_cast(sym: Symbol) -> Symbol:
    """Bypass mixed-precision casts (`OpGroup.AMP`; copies the graph only when there are any).
    A cast that is itself a graph output is kept (MXNet's RemoveAmpCast rewires inputs only)."""
    order = sym.topo()
    if not any(_amp(n) for n in order):
        return sym
    new: dict[int, Node] = {}

    def resolve(e):
        n, i = e
        while _amp(n):                   # a multi-input cast passes input i to output i
            n, i = n.inputs[i if len(n.inputs) > 1 else 0]
        return new[id(n)], i

    heads = {id(n) for n, _ in sym.outputs}
    for n in order:
        if _amp(n) and id(n) not in heads:
            continue
        c = Node(n.opname, n.name, n.attrs, op=n.op)
        c.inputs = [resolve(e) for e in n.inputs]
        c.subgraphs = n.subgraphs
        new[id(n)] = c
    # as MXNet's RemoveAmpCast: consumers skip the casts; a cast that is an output stays
    return Symbol([(new[id(n)], i) for n, i in sym.outputs])
