"""Rewrite a (2.x-style) graph so that real MXNet 1.9.1 can load it: `HybridBlock.export(..., format='1.x')`.

What changes:
* 2.x-only operator names become their 1.x equivalents (`_npi_add` → `broadcast_add`,
  `_npi_multiply_scalar` → `_mul_scalar`, `_npx_relu` → `relu`, `_npx_reshape` → `Reshape` with
  translated special codes, `_npi_sum` → `sum`, …). An operator 1.9.1 does not have, or an
  attribute value it cannot express, raises `LegacyExportError` naming the node.
* Attributes are written in 1.x spelling (`"(3, 3)"`, `"True"`), `None` values omitted, and only
  attributes 1.9.1 knows for that operator (table in `legacy_ops.py`, generated from 1.9.1).
* Variables: unknown `__shape__` dims become 0; `__profiler_scope__` and other 2.x-only hidden
  attributes are dropped. (The writer adds `mxnet_version` 10901 and no `is_np_shape`.)
The result is an ordinary `Symbol` bound to hybridserve's registry, so it also reloads here.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as _onp

from ..base import GraphFormatError
from ..ops.attrs import parse_tuple
from ..ops.registry import OpDef, get_op
from .graph import Node, Symbol
from .legacy_ops import MX191_OPS, MX191_REQUIRED_NONE

__all__ = ["to_legacy", "export_legacy", "LegacyExportError", "legacy_op_for"]

_NP_PREFIX = ("_npi_", "_npx_", "_np_")
# hidden variable attributes that 1.x files carry (others, e.g. __profiler_scope__, are 2.x-only)
_VAR_KEEP = ("__shape__", "__dtype__", "__storage_type__", "__lr_mult__", "__wd_mult__",
             "__init__", "__ctx_group__")

# same attributes, different name (numpy-style broadcasting ops are 1.x's broadcast_* family)
RENAME = {
    "_npi_add": "broadcast_add", "_npi_subtract": "broadcast_sub",
    "_npi_multiply": "broadcast_mul", "_npi_true_divide": "broadcast_div",
    "_npi_power": "broadcast_power", "_npi_mod": "broadcast_mod", "_npi_hypot": "broadcast_hypot",
    "_npi_maximum": "broadcast_maximum", "_npi_minimum": "broadcast_minimum",
    "_npi_equal": "broadcast_equal", "_npi_not_equal": "broadcast_not_equal",
    "_npi_greater": "broadcast_greater", "_npi_greater_equal": "broadcast_greater_equal",
    "_npi_less": "broadcast_lesser", "_npi_less_equal": "broadcast_lesser_equal",
    "_npi_logical_and": "broadcast_logical_and", "_npi_logical_or": "broadcast_logical_or",
    "_npi_logical_xor": "broadcast_logical_xor",
    "_npi_add_scalar": "_plus_scalar", "_npi_subtract_scalar": "_minus_scalar",
    "_npi_rsubtract_scalar": "_rminus_scalar", "_npi_multiply_scalar": "_mul_scalar",
    "_npi_true_divide_scalar": "_div_scalar", "_npi_rtrue_divide_scalar": "_rdiv_scalar",
    "_npi_mod_scalar": "_mod_scalar", "_npi_rmod_scalar": "_rmod_scalar",
    "_npi_power_scalar": "_power_scalar", "_npi_rpower_scalar": "_rpower_scalar",
    "_npi_maximum_scalar": "_maximum_scalar", "_npi_minimum_scalar": "_minimum_scalar",
    "_npi_hypot_scalar": "_hypot_scalar", "_npi_equal_scalar": "_equal_scalar",
    "_npi_not_equal_scalar": "_not_equal_scalar", "_npi_greater_scalar": "_greater_scalar",
    "_npi_greater_equal_scalar": "_greater_equal_scalar", "_npi_less_scalar": "_lesser_scalar",
    "_npi_less_equal_scalar": "_lesser_equal_scalar",
    "_npi_logical_and_scalar": "_logical_and_scalar",
    "_npi_logical_or_scalar": "_logical_or_scalar",
    "_npi_logical_xor_scalar": "_logical_xor_scalar",
    "_npx_relu": "relu", "_npx_sigmoid": "sigmoid", "_npi_copy": "_copy",
    "_npi_zeros_like": "zeros_like", "_npi_ones_like": "ones_like",
    "_npi_stop_gradient": "BlockGrad", "_npi_flip": "reverse",
    "_npi_broadcast_to": "broadcast_to", "_npi_transpose": "transpose",
}
# attribute values 1.9.1 rejects (newer enum members)
_CHOICES = {("Activation", "act_type"): {"relu", "sigmoid", "softrelu", "softsign", "tanh"},
            ("LeakyReLU", "act_type"): {"elu", "gelu", "leaky", "prelu", "rrelu", "selu"}}
# attributes that 1.x's operator takes but must not be written (device strings of init ops)
_DROP = {"ctx"}


class LegacyExportError(GraphFormatError):
    """The graph uses something MXNet 1.9.1 cannot express."""


def _err(node: Node, why: str) -> LegacyExportError:
    return LegacyExportError(f"cannot export node '{node.name}' (op {node.opname}) in MXNet 1.x "
                             f"format: {why}")


# -- attribute spelling ------------------------------------------------------------------------
def _fmt(v: Any) -> str:
    """1.x spelling: Python `str()` of the user's value (`(3, 3)`, `True`, `1e-05`, `float32`)."""
    if isinstance(v, (bool, _onp.bool_)):
        return "True" if v else "False"
    if isinstance(v, (tuple, list)):
        return str(tuple(None if x is None else (int(x) if isinstance(x, (int, _onp.integer))
                                                  else x) for x in v))
    if isinstance(v, _onp.dtype):
        return v.name
    if isinstance(v, type) and issubclass(v, _onp.generic):
        return _onp.dtype(v).name
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
        allowed = _CHOICES.get((target, k))
        if allowed is not None and v not in allowed:
            raise _err(node, f"{target}({k}={v!r}) is not supported by MXNet 1.9.1 "
                             f"(supported: {', '.join(sorted(allowed))})")
        out[k] = _fmt(v)
    return out


# -- operator translations ---------------------------------------------------------------------
def _np_reshape_codes(node: Node, codes: tuple) -> tuple:
    """npx.reshape codes → 1.x Reshape codes.

    npx: -1 infer, -2 copy a dim, -3 drop a size-1 dim, -4 copy the rest, -5 merge two dims,
    -6 a b split a dim. 1.x: 0 copy, -1 infer, -2 copy the rest, -3 merge two, -4 a b split.
    A dropped size-1 dim is merged into a neighbouring copied dim (same size).
    """
    out: list[int] = []
    pending_drop = False
    i = 0
    while i < len(codes):
        c = codes[i]
        if c == -3:
            if out and out[-1] == 0:
                out[-1] = -3
            else:
                pending_drop = True
            i += 1
            continue
        if pending_drop and c not in (-2, -4):
            raise _err(node, f"npx.reshape code -3 in {codes} has no 1.x equivalent here")
        if c == -2:
            out.append(-3 if pending_drop else 0)
            pending_drop = False
        elif c == -4:
            out += [-3, -2] if pending_drop else [-2]      # merge the size-1 dim into the next
            pending_drop = False
        elif c == -5:
            out.append(-3)
        elif c == -6:
            if i + 2 >= len(codes):
                raise _err(node, f"npx.reshape code -6 needs two values: {codes}")
            out += [-4, codes[i + 1], codes[i + 2]]
            i += 2
        elif c == 0:
            raise _err(node, f"a zero-size dimension in {codes} has no 1.x Reshape code")
        else:
            out.append(c)                       # positive sizes and -1
        i += 1
    if pending_drop:
        raise _err(node, f"npx.reshape code -3 in {codes} has no 1.x equivalent here")
    return tuple(out)


def _t_npx_reshape(node, a, shape_of):
    try:
        return "Reshape", {"shape": _np_reshape_codes(node, tuple(a.newshape)),
                           "reverse": bool(a.get("reverse", False))}
    except LegacyExportError:
        out = shape_of((node, 0))
        if out is None:
            raise
        return "Reshape", {"shape": tuple(out)}       # static target shape as the last resort


def _t_np_reshape(node, a, shape_of):
    shape = tuple(a.newshape)
    if any(d == 0 or d < -1 for d in shape):
        raise _err(node, f"np.reshape target {shape} has no 1.x Reshape equivalent")
    return "Reshape", {"shape": shape}


def _axis_tuple(v):
    if v is None:
        return None
    return tuple(v) if isinstance(v, (tuple, list)) else (int(v),)


def _reduce(legacy: str, numpy_name: str) -> Callable:
    def t(node, a, shape_of):
        dtype = a.get("dtype")
        # np.mean records dtype float32 by default; 1.x reductions keep the (float32) input type
        # a full reduction is 0-d in numpy but (1,) in 1.x: keep the numpy op 1.9.1 also has
        full = a.get("axis") is None and not a.get("keepdims")
        if full or (dtype is not None and _onp.dtype(dtype) != _onp.float32) \
                or a.get("initial") is not None:
            return numpy_name, dict(a)           # 1.9.1 has the numpy op with these options
        return legacy, {"axis": _axis_tuple(a.get("axis")), "keepdims": bool(a.get("keepdims"))}
    return t


def _t_squeeze(node, a, shape_of):
    return "squeeze", {"axis": _axis_tuple(a.get("axis"))}


def _t_concatenate(node, a, shape_of):
    if a.axis is None:
        raise _err(node, "np.concatenate(axis=None) has no 1.x equivalent")
    return "Concat", {"dim": int(a.axis), "num_args": int(a.num_args)}


def _t_repeats(node, a, shape_of):
    reps = tuple(a.repeats)
    if len(reps) != 1:
        raise _err(node, f"per-element repeats {reps} have no 1.x equivalent")
    return "repeat", {"repeats": int(reps[0]), "axis": a.get("axis")}


def _init_op(legacy: str) -> Callable:
    def t(node, a, shape_of):
        return legacy, {k: v for k, v in a.items() if k != "ctx"}
    return t


def _t_norm(node, a, shape_of):
    ord_ = a.get("ord")
    if ord_ not in (None, 1, 2, 1.0, 2.0):
        raise _err(node, f"norm ord={ord_} has no 1.x equivalent (1.x supports 1 and 2)")
    return "norm", {"ord": int(ord_ or 2), "axis": _axis_tuple(a.get("axis")),
                    "keepdims": bool(a.get("keepdims"))}


def _t_moveaxis(node, a, shape_of):
    shape = shape_of(node.inputs[0])
    if shape is None:
        raise _err(node, "np.moveaxis needs the input rank; pass input_shapes to the 1.x export")
    nd = len(shape)
    src = [d % nd for d in _axis_tuple(a.source)]
    dst = [d % nd for d in _axis_tuple(a.destination)]
    order = [d for d in range(nd) if d not in src]
    for d, s_ in sorted(zip(dst, src)):
        order.insert(d, s_)
    return "transpose", {"axes": tuple(order)}


def _t_group_norm(node, a, shape_of):
    # 1.x GroupNorm takes one gamma/beta per group, Gluon 2 one per channel: equal only when
    # there are as many groups as channels or the stored gamma is per group
    gamma = shape_of(node.inputs[1]) if len(node.inputs) > 1 else None
    if gamma is None or (gamma[0] != a.num_groups):
        raise _err(node, f"GroupNorm with per-channel gamma/beta (shape {gamma}) and "
                         f"num_groups={a.num_groups} has no MXNet 1.9.1 equivalent (1.x GroupNorm "
                         "takes one gamma/beta per group)")
    return "GroupNorm", dict(a)


def _t_leaky(node, a, shape_of):
    attrs = dict(a)
    if attrs.get("act_type") == "gelu_erf":
        attrs["act_type"] = "gelu"
    return "LeakyReLU", attrs


TRANSLATE: dict[str, Callable] = {
    "_npx_reshape": _t_npx_reshape, "_np_reshape": _t_np_reshape, "_npi_reshape": _t_np_reshape,
    "_npi_sum": _reduce("sum", "_np_sum"), "_np_sum": _reduce("sum", "_np_sum"),
    "_npi_mean": _reduce("mean", "_npi_mean"),
    "_npi_max": _reduce("max", "_np_max"), "_np_max": _reduce("max", "_np_max"),
    "_npi_min": _reduce("min", "_np_min"), "_np_min": _reduce("min", "_np_min"),
    "_npi_prod": _reduce("prod", "_np_prod"), "_np_prod": _reduce("prod", "_np_prod"),
    "_npi_squeeze": _t_squeeze, "_np_squeeze": _t_squeeze,
    "_npi_concatenate": _t_concatenate, "_npi_repeats": _t_repeats,
    "_npi_zeros": _init_op("_zeros"), "_npi_ones": _init_op("_ones"),
    "_npi_full": _init_op("_full"), "_npi_empty": _init_op("_zeros"),
    "_npi_arange": _init_op("_arange"), "_zeros": _init_op("_zeros"), "_ones": _init_op("_ones"),
    "_npi_norm": _t_norm, "LeakyReLU": _t_leaky, "_npx_leaky_relu": _t_leaky,
    "_npi_moveaxis": _t_moveaxis, "GroupNorm": _t_group_norm, "_npx_group_norm": _t_group_norm,
}


def legacy_op_for(opname: str, op: OpDef) -> str | None:
    """The 1.9.1 operator name to write for a node of `opname` (None: there is none).

    Order: explicit renames; the name itself when it is a 1.x name 1.9.1 has; a 1.x alias of
    the same operator; the numpy-style name itself or an alias that 1.9.1 also registers.
    """
    if opname in RENAME:
        return RENAME[opname]
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
    if node.opname in TRANSLATE:
        target, values = TRANSLATE[node.opname](node, a, shape_of)
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
    from .infer import infer_shapes
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
            if len(c.inputs) != len(c.op.input_names(c.parsed)) and not c.op.aux:
                # a translation must never change the arity; fail loudly instead of writing junk
                raise _err(n, f"{target} expects {len(c.op.input_names(c.parsed))} inputs, "
                              f"got {len(c.inputs)}")
        c.control_deps = [new[id(d)] for d in n.control_deps]
        c.subgraphs = [to_legacy(g) for g in n.subgraphs]
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
    from ..io.atomic import write_atomic
    from ..io.params_file import save_params
    from .json_io import to_json
    sym_file = f"{path}-symbol.json"
    text = to_json(sym, remove_amp_cast=remove_amp_cast, version=10901, np_shape=False)
    write_atomic(sym_file, text.encode("utf-8"))
    params_file = f"{path}-{epoch:04d}.params"
    save_params(params_file, {k: _onp.asarray(getattr(v, "_data", v)) for k, v in arg_dict.items()},
                format="legacy")
    return sym_file, (params_file if arg_dict else None)
