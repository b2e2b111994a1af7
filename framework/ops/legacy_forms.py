"""MXNet 1.x forms of operators whose 2.x spelling 1.9.1 lacks: the translators `OpDef.legacy`
holds, `(node, attrs, shape_of) -> (1.x operator name, attribute values)` (symbol/legacy_export.py
applies them). A translation that 1.9.1 cannot express raises `LegacyExportError` naming the node.
"""
from __future__ import annotations

from typing import Callable

import numpy as _onp

from ..base import LegacyExportError


# attribute values MXNet 1.9.1 rejects (enum members added later)
MX191_CHOICES = {("Activation", "act_type"): {"relu", "sigmoid", "softrelu", "softsign", "tanh"},
                 ("LeakyReLU", "act_type"): {"elu", "gelu", "leaky", "prelu", "rrelu", "selu"}}


def export_error(node, why: str) -> LegacyExportError:
    return LegacyExportError(f"cannot export node '{node.name}' (op {node.opname}) in MXNet 1.x "
                             f"format: {why}")


def _np_reshape_codes(node, codes: tuple) -> tuple:
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
            raise export_error(node, f"npx.reshape code -3 in {codes} has no 1.x equivalent here")
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
                raise export_error(node, f"npx.reshape code -6 needs two values: {codes}")
            out += [-4, codes[i + 1], codes[i + 2]]
            i += 2
        elif c == 0:
            raise export_error(node, f"a zero-size dimension in {codes} has no 1.x Reshape code")
        else:
            out.append(c)                       # positive sizes and -1
        i += 1
    if pending_drop:
        raise export_error(node, f"npx.reshape code -3 in {codes} has no 1.x equivalent here")
    return tuple(out)


def npx_reshape(node, a, shape_of):
    try:
        return "Reshape", {"shape": _np_reshape_codes(node, tuple(a.newshape)),
                           "reverse": bool(a.get("reverse", False))}
    except LegacyExportError:
        out = shape_of((node, 0))
        if out is None:
            raise
        return "Reshape", {"shape": tuple(out)}       # static target shape as the last resort


def np_reshape(node, a, shape_of):
    shape = tuple(a.newshape)
    if any(d == 0 or d < -1 for d in shape):
        raise export_error(node, f"np.reshape target {shape} has no 1.x Reshape equivalent")
    return "Reshape", {"shape": shape}


def _axis_tuple(v):
    if v is None:
        return None
    return tuple(v) if isinstance(v, (tuple, list)) else (int(v),)


def reduction(legacy: str, numpy_name: str) -> Callable:
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


def squeeze(node, a, shape_of):
    return "squeeze", {"axis": _axis_tuple(a.get("axis"))}


def concatenate(node, a, shape_of):
    if a.axis is None:
        raise export_error(node, "np.concatenate(axis=None) has no 1.x equivalent")
    return "Concat", {"dim": int(a.axis), "num_args": int(a.num_args)}


def repeats(node, a, shape_of):
    reps = tuple(a.repeats)
    if len(reps) != 1:
        raise export_error(node, f"per-element repeats {reps} have no 1.x equivalent")
    return "repeat", {"repeats": int(reps[0]), "axis": a.get("axis")}


def creation(legacy: str) -> Callable:
    def t(node, a, shape_of):
        return legacy, {k: v for k, v in a.items() if k != "ctx"}
    return t


def norm(node, a, shape_of):
    ord_ = a.get("ord")
    if ord_ not in (None, 1, 2, 1.0, 2.0):
        raise export_error(node, f"norm ord={ord_} has no 1.x equivalent (1.x supports 1 and 2)")
    return "norm", {"ord": int(ord_ or 2), "axis": _axis_tuple(a.get("axis")),
                    "keepdims": bool(a.get("keepdims"))}


def moveaxis(node, a, shape_of):
    shape = shape_of(node.inputs[0])
    if shape is None:
        raise export_error(node, "np.moveaxis needs the input rank; pass input_shapes to the "
                                 "1.x export")
    nd = len(shape)
    src = [d % nd for d in _axis_tuple(a.source)]
    dst = [d % nd for d in _axis_tuple(a.destination)]
    order = [d for d in range(nd) if d not in src]
    for d, s_ in sorted(zip(dst, src)):
        order.insert(d, s_)
    return "transpose", {"axes": tuple(order)}


def group_norm(node, a, shape_of):
    # 1.x GroupNorm takes one gamma/beta per group, Gluon 2 one per channel: equal only when
    # there are as many groups as channels or the stored gamma is per group
    gamma = shape_of(node.inputs[1]) if len(node.inputs) > 1 else None
    if gamma is None or (gamma[0] != a.num_groups):
        raise export_error(node, f"GroupNorm with per-channel gamma/beta (shape {gamma}) and "
                         f"num_groups={a.num_groups} has no MXNet 1.9.1 equivalent (1.x GroupNorm "
                         "takes one gamma/beta per group)")
    return "GroupNorm", dict(a)


def leaky_relu(node, a, shape_of):
    attrs = dict(a)
    if attrs.get("act_type") == "gelu_erf":
        attrs["act_type"] = "gelu"
    return "LeakyReLU", attrs
