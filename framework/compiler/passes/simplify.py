"""Parameter-free graph simplification: identity removal, constant folding, dead-node removal.

Identities at inference are the ops of the registry's group `OpGroup.IDENTITY_AT_INFERENCE` (
Dropout, BlockGrad, copies). Constant folding evaluates, once at build time, every node whose
inputs are all constants (creation ops such as `_npi_zeros` and whatever depends only on them);
the results become `_hs_const` nodes holding the folded arrays. Dead nodes disappear by
construction: the rebuilt graph holds only what its outputs reach.
"""
from __future__ import annotations

import numpy as np

from ...ops.attrs import Attrs
from ...ops.compiled.const import const as CONST
from ...ops.groups import OpGroup
from ...symbol.graph import Node, Symbol
from .rewrite import rebuild
from .unknown_dims import unresolved_nodes

_MAX_FOLD_BYTES = 64 << 20


class ConstNode(Node):
    __slots__ = ("value",)


def remove_identities(sym: Symbol) -> Symbol:
    def visit(n: Node, ins, done):
        if not n.is_var and n.op.name in OpGroup.IDENTITY_AT_INFERENCE and ins:
            return [ins[0]] * n.num_outputs()
        return None
    return rebuild(sym, visit)


def fold_constants(sym: Symbol) -> Symbol:
    def visit(n: Node, ins, done):
        if n.is_var or n.op is CONST or n.op.random or n.num_outputs() != 1:
            return None
        if unresolved_nodes([n]):          # 0 dims are only known per input signature
            return None
        srcs = [e[0] for e in ins]
        if not all(isinstance(s, ConstNode) for s in srcs):
            return None
        try:
            res = n.op.kernel(n.parsed, *[s.value[i] for s, (_, i) in zip(srcs, ins)])
        except Exception:  # noqa: BLE001 - leave it to run time, where errors name the node
            return None
        outs = res if isinstance(res, tuple) else (res,)
        if sum(np.asarray(o).nbytes for o in outs) > _MAX_FOLD_BYTES:
            return None
        c = ConstNode(CONST.name, n.name, {"key": n.name}, op=CONST)
        c.value = tuple(np.asarray(o) for o in outs)
        c._parsed = Attrs(key=n.name, shape=c.value[0].shape, dtype=c.value[0].dtype)
        return [(c, i) for i in range(len(outs))]
    return rebuild(sym, visit)


def simplify(sym: Symbol) -> Symbol:
    return fold_constants(remove_identities(sym))


def consts_to_params(sym: Symbol, params: dict[str, np.ndarray]) -> tuple[Symbol, dict]:
    """Turn folded constants into parameters, so the graph can be exported and reloaded."""
    params = dict(params)

    def visit(n: Node, ins, done):
        if isinstance(n, ConstNode):
            name = f"{n.name}_const"
            params[name] = n.value[0]
            return [(Node("null", name, {"__shape__": str(tuple(n.value[0].shape))}), 0)]
        return None
    return rebuild(sym, visit), params
