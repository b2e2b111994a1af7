"""Rewrite a (2.x-style) graph so that real MXNet 1.9.1 can load it: `HybridBlock.export(..., format='1.x')`.

What changes:
* 2.x-only operator names become their 1.x equivalents (`_npi_add` → `broadcast_add`,
  `_npi_multiply_scalar` → `_mul_scalar`, `_npx_relu` → `relu`, `_npx_reshape` → `Reshape` with
  translated special codes, `_npi_sum` → `sum`, …). An operator 1.9.1 does not have, or an
  attribute value it cannot express, raises `LegacyExportError` naming the node.
* Attributes are written in 1.x spelling (`"(3, 3)"`, `"True"`), `None` values omitted, and only
  attributes 1.9.1 knows for that operator (`ops/mxnet191.py`, generated from 1.9.1).
* Operators whose 1.x form differs carry it on their registry entry (`OpDef.legacy`: a name,
  or a translator in `ops/legacy_forms.py`).
* Variables: unknown `__shape__` dims become 0; `__profiler_scope__` and other 2.x-only hidden
  attributes are dropped. (The writer adds `mxnet_version` 10901 and no `is_np_shape`.)
The result is an ordinary `Symbol` bound to hybridserve's registry, so it also reloads here.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as _onp

from ..base import LegacyExportError
from ..io.atomic import write_atomic
from ..io.dtypes import narrow_bfloat16
from ..io.params_file import save_params
from ..ops.attrs import format_value, parse_tuple
from ..ops.legacy_forms import MX191_CHOICES, export_error as _err
from ..ops.mxnet191 import MX191_OPS, MX191_REQUIRED_NONE
from ..ops.registry import OpDef, get_op
from .graph import Node, Symbol, bfloat16_vars
from .infer import infer_shapes
from .json_io import to_json

__all__ = ["to_legacy", "export_legacy", "LegacyExportError", "legacy_op_for"]

_NP_PREFIX = ("_npi_", "_npx_", "_np_")
# hidden variable attributes that 1.x files carry (others, e.g. __profiler_scope__, are 2.x-only)
_VAR_KEEP = ("__shape__", "__dtype__", "__storage_type__", "__lr_mult__", "__wd_mult__",
             "__init__", "__ctx_group__")

# attributes that 1.x's operator takes but must not be written (device strings of init ops)
_DROP = {"ctx"}


# -- attribute spelling ------------------------------------------------------------------------
def _fmt(v: Any) -> str:
    """1.x spelling: Python `str()` of the user's value (`(3, 3)`, `True`, `1e-05`, `float32`)."""
    if isinstance(v, (bool, _onp.bool_)):
        return "True" if v else "False"
    if isinstance(v, (tuple, list)):
        return str(tuple(None if x is None else (int(x) if isinstance(x, (int, _onp.integer))
                                                  else x) for x in v))
    if isinstance(v, _onp.dtype) or (isinstance(v, type) and issubclass(v, _onp.generic)):
        return format_value(v)            # bfloat16 has no numpy name
    if isinstance(v, (float, _onp.floating)):
        return repr(float(v))
    if isinstance(v, _onp.integer):
        return str(int(v))
    return str(v)


def _write_attrs(node: Node, target: str, values: dict[str, Any], schema: dict) -> dict[str, str]:
    known = MX191_OPS[target]
    out = {}
    for k, v in values.items():
        spec = schema.get(k)
        if k.startswith("__") or k in _DROP:
            continue
        if v is None:
            if k in MX191_REQUIRED_NONE.get(target, ()):
                out[k] = "None"          # 1.9.1 requires it although None is legal (slice_axis end)
            continue
        if k not in known and k != "num_args":        # num_args: variadic ops' key var arg
            if spec is None:
                continue                 # an attribute the op ignores (1.x zeros_like dtype)
            if not spec.required and v == spec.default:
                continue                 # a newer attribute left at its default: omit it
            raise _err(node, f"attribute {k}={v!r} does not exist in MXNet 1.9.1's {target}")
        allowed = MX191_CHOICES.get((target, k))
        if allowed is not None and v not in allowed:
            raise _err(node, f"{target}({k}={v!r}) is not supported by MXNet 1.9.1 "
                             f"(supported: {', '.join(sorted(allowed))})")
        out[k] = _fmt(v)
    return out


def legacy_op_for(opname: str, op: OpDef) -> str | None:
    """The 1.9.1 operator name to write for a node spelled `opname` (None: there is none).

    Order: the spelling itself when it is a 1.x name 1.9.1 has (the file keeps its own words);
    the op's declared 1.x name (`OpDef.legacy`); a 1.x alias of the same operator; the
    numpy-style name itself or an alias that 1.9.1 also registers.
    """
    if opname in MX191_OPS and not opname.startswith(_NP_PREFIX):
        return opname
    if isinstance(op.legacy, str):
        return op.legacy
    names = [opname, op.name, *op.aliases]
    for n in names:
        if n in MX191_OPS and not n.startswith(_NP_PREFIX):
            return n
    for n in names:
        if n in MX191_OPS:
            return n
    return None


def _translate(node: Node, shape_of: Callable) -> tuple[str, dict[str, str]]:
    a = node.parsed
    schema = node.op.attrs
    if callable(node.op.legacy):
        target, values = node.op.legacy(node, a, shape_of)
    else:
        target = legacy_op_for(node.opname, node.op)
        if target is None:
            raise _err(node, "MXNet 1.9.1 has no such operator and no 1.x equivalent is known")
        values = dict(a)
    if target not in MX191_OPS:
        raise _err(node, f"its 1.x form {target} is not an MXNet 1.9.1 operator")
    return target, _write_attrs(node, target, values, schema)


def _var_attrs(attrs: dict[str, str]) -> dict[str, str]:
    out = {}
    for k, v in attrs.items():
        if k not in _VAR_KEEP:
            continue
        if k == "__shape__":
            try:
                dims = parse_tuple(v)
            except ValueError:
                continue
            if dims is None:
                continue
            v = str(tuple(0 if (d is None or d < 0) else int(d) for d in dims))
        out[k] = v
    return out


def to_legacy(sym: Symbol, input_shapes: dict[str, tuple] | None = None) -> Symbol:
    """A copy of `sym` that real MXNet 1.9.1 can load (see the module docstring).

    `input_shapes` ({input name: shape}, optional) lets rank-dependent operators (np.moveaxis)
    be translated too.
    """
    try:
        shapes = infer_shapes(sym, dict(input_shapes or {}))
    except Exception:                           # noqa: BLE001  (shapes are only a hint)
        shapes = {}

    def shape_of(entry):
        return shapes.get((id(entry[0]), entry[1]))

    new: dict[int, Node] = {}
    for n in sym.topo():
        if n.is_var:
            c = Node("null", n.name, _var_attrs(n.attrs))
        else:
            target, attrs = _translate(n, shape_of)
            c = Node(target, n.name, attrs, op=get_op(target, n.name))
            c.inputs = [(new[id(src)], i) for src, i in n.inputs]
            c.subgraphs = [to_legacy(g) for g in n.subgraphs]   # fused ops parse from it
            if len(c.inputs) != len(c.op.input_names(c.parsed)) and not c.op.aux:
                # a translation must never change the arity; fail loudly instead of writing junk
                raise _err(n, f"{target} expects {len(c.op.input_names(c.parsed))} inputs, "
                              f"got {len(c.inputs)}")
        c.control_deps = [new[id(d)] for d in n.control_deps]
        new[id(n)] = c
    return Symbol([(new[id(n)], i) for n, i in sym.outputs])


def export_legacy(block, path: str | None, epoch: int = 0, remove_amp_cast: bool = True,
                  input_shapes: dict[str, tuple] | None = None):
    """`block.export(path, epoch)` in MXNet 1.x format: 1.x symbol JSON (version 10901, no
    `is_np_shape`) and a legacy binary `.params` file (V2 records, `arg:`/`aux:` keys).

    With `path=None` returns `(legacy symbol, arg_dict)` without writing anything.
    """
    sym, arg_dict = block.export(None, epoch, remove_amp_cast)
    sym = to_legacy(sym, input_shapes)
    if path is None:
        return sym, arg_dict
    sym_file = f"{path}-symbol.json"
    text = to_json(sym, remove_amp_cast=remove_amp_cast, version=10901, np_shape=False)
    write_atomic(sym_file, text.encode("utf-8"))
    params_file = f"{path}-{epoch:04d}.params"
    arrays = {k: _onp.asarray(getattr(v, "_data", v)) for k, v in arg_dict.items()}
    save_params(params_file, narrow_bfloat16(arrays, bfloat16_vars(sym)), format="legacy")
    return sym_file, (params_file if arg_dict else None)
