"""Resolve the unknown dims (0) of legacy creation ops such as `_zeros(shape=(0, H))`
(`OpGroup.UNKNOWN_ZERO_DIMS`: in MXNet 1.x a 0 in their shape is left to shape inference).

MXNet 1.x graphs create RNN begin states with `_zeros` whose 0 dims are left for MXNet's
bidirectional shape inference to fill (the batch size, known only from the data). We resolve them
per input signature: try each distinct dimension of the graph inputs as the value of the unknowns
and keep the first for which forward shape inference of the whole graph succeeds.
"""
from __future__ import annotations

from ...ops.attrs import Attrs
from ...ops.groups import OpGroup
from ...symbol.graph import Node, Symbol
from ...symbol.infer import infer_shapes


def unresolved_nodes(order: list[Node]) -> list[Node]:
    return [n for n in order if not n.is_var and n.op.name in OpGroup.UNKNOWN_ZERO_DIMS
            and any(d == 0 for d in (n.parsed.get("shape") or ()))]


def resolve(sym: Symbol, nodes: list[Node], input_shapes: dict[str, tuple]) -> dict[int, Attrs]:
    """Attrs with concrete shapes for `nodes`, given the shapes of the graph inputs."""
    candidates: list[int] = []
    for shp in input_shapes.values():
        for d in shp:
            if d > 0 and d not in candidates:
                candidates.append(d)
    for value in candidates:
        trial = {}
        for n in nodes:
            a = Attrs(n.parsed)
            a["shape"] = tuple(value if d == 0 else d for d in n.parsed.shape)
            trial[id(n)] = a
        saved = [(n, n._parsed) for n in nodes]
        try:
            for n in nodes:
                n._parsed = trial[id(n)]
            shapes = infer_shapes(sym, input_shapes)
            if all(shapes.get((id(n), i)) is not None for n, i in sym.outputs):
                return trial
        except Exception:  # noqa: BLE001 - a failed trial just means "not this value"
            pass
        finally:
            for n, p in saved:
                n._parsed = p
    names = ", ".join(f"'{n.name}' ({n.opname} shape {n.parsed.shape})" for n in nodes)
    raise ValueError(f"cannot infer the unknown (0) dimensions of {names} from input shapes "
                     f"{input_shapes}")
