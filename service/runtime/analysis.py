"""Graph facts, computed once: shapes, dtypes, parameter counts and FLOPs of one graph per
input signature, cached on the loaded model (`Runner.facts`).

Everything in the service that needs them reads them here — the load-time limits
(`limits.check_activations`), the inferred signature (signature.py), the summary table
(summary.py) and the console's graph view (graphview.py) — so loading a model and drawing it
run shape inference once per distinct set of input shapes, not once per reader. Shape
inference is tolerant (a node it cannot infer blanks itself and what depends on it) and starts
from the parameter shapes of the params file, so no reader has to catch a failure of it.
"""
from __future__ import annotations

import math
from typing import Iterable

import numpy as np

from framework.base import MXNetError
from framework.symbol.infer import infer_dtypes, infer_shapes

from .probe import attempt

Shapes = dict[tuple[int, int], "tuple[int, ...] | None"]
_KEEP = 16                          # signatures remembered per graph (a model sees a few)


def _key(known: dict) -> tuple:
    return tuple(sorted((k, tuple(int(d) for d in v)) for k, v in known.items()))


class GraphFacts:
    """One graph's facts. `data_names`: its data inputs (everything else is a parameter);
    `param_shapes`: the parameters' shapes as loaded."""

    def __init__(self, sym, data_names: Iterable[str], param_shapes: dict[str, tuple]):
        self.sym = sym
        self.data_names = set(data_names)
        self.param_shapes = {k: tuple(v) for k, v in param_shapes.items()}
        self.aux_names = set(sym.list_auxiliary_states())
        self.runs = 0               # shape inferences run (each signature once)
        self._shapes: dict[tuple, Shapes] = {}
        self._dtypes: dict[tuple, dict] = {}
        self._tables: dict[tuple, dict] = {}
        self.memo: dict[str, object] = {}   # views built from these facts (e.g. the graph)

    # -- shapes and dtypes -----------------------------------------------------------------
    def shapes(self, known: dict[str, tuple]) -> Shapes:
        """Shape of every entry `(id(node), output)` at these data shapes; None where unknown."""
        key = _key(known)
        got = self._shapes.get(key)
        if got is None:
            self.runs += 1
            got = infer_shapes(self.sym, {**self.param_shapes, **known}, tolerant=True)
            if len(self._shapes) < _KEEP:
                self._shapes[key] = got
        return got

    def accepts(self, known: dict[str, tuple]) -> bool:
        """Whether every graph output has a shape at these data shapes (no node refuses them),
        without keeping the result: probes of candidate shapes must not crowd the cache."""
        shapes = infer_shapes(self.sym, {**self.param_shapes, **known}, tolerant=True)
        return all(shapes.get((id(n), i)) is not None for n, i in self.sym.outputs)

    def dtypes(self, known: dict[str, np.dtype]) -> dict:
        """Dtype of every entry at these input dtypes; empty when the graph's dtype rules
        cannot follow them (readers then assume the default, FP32)."""
        key = tuple(sorted((k, np.dtype(v).str) for k, v in known.items()))
        got = self._dtypes.get(key)
        if got is None:
            got, _ = attempt(infer_dtypes, self.sym, known)   # an op's dtype rule may fail
            got = self._dtypes[key] = got or {}
        return got

    def output_shapes(self, known: dict[str, tuple]) -> list:
        shapes = self.shapes(known)
        return [shapes.get((id(n), i)) for n, i in self.sym.outputs]

    # -- parameters and FLOPs --------------------------------------------------------------
    def table(self, known: dict[str, tuple]) -> dict:
        """One row per op node (output shape, parameter count, FLOPs) and the totals."""
        key = _key(known)
        got = self._tables.get(key)
        if got is None:
            got = self._table(self.shapes(known))
            if len(self._tables) < _KEEP:
                self._tables[key] = got
        return got

    def _table(self, shapes: Shapes) -> dict:
        rows, seen = [], set()
        total = trainable = shared = flops_total = 0
        flops_known = True
        for n in self.sym.topo():
            if n.is_var:
                continue
            ins = [shapes.get((id(s), i)) for s, i in n.inputs]
            outs = [shapes.get((id(n), i)) for i in range(n.num_outputs())]
            n_params = n_train = n_shared = 0
            for (s, _), shp in zip(n.inputs, ins):
                if not s.is_var or s.name in self.data_names:
                    continue
                size = int(math.prod(shp)) if shp is not None else 0
                n_params += size
                n_train += size if s.name not in self.aux_names else 0
                n_shared += size if s.name in seen else 0
                seen.add(s.name)
            fl = node_flops(n, ins, outs)
            if n.op is not None and n.op.flops is not None:
                flops_known = flops_known and fl is not None
                flops_total += fl or 0
            vis = [list(o) if o is not None else None for o in outs[: n.num_visible()]]
            rows.append({"name": n.name, "op": n.opname,
                         "output_shape": vis[0] if len(vis) == 1 else vis,
                         "params": n_params, "flops": fl})
            total, trainable, shared = total + n_params, trainable + n_train, shared + n_shared
        return {"layers": rows,
                "total_params": total, "trainable_params": trainable,
                "non_trainable_params": total - trainable, "shared_params": shared,
                "unique_params": total - shared,
                "flops": flops_total, "flops_complete": flops_known}


def node_flops(n, ins: list, outs: list) -> int | None:
    """The op's FLOP estimate (its OpDef's `flops` rule) at these shapes; None when the op has
    no rule or a shape is unknown."""
    if n.op is None or n.op.flops is None or any(x is None for x in ins + outs):
        return None
    fl, _ = attempt(lambda: int(n.op.flops(n.parsed, ins, outs)))   # an estimate: none if it fails
    return fl


def input_slot_names(n) -> list[str]:
    """The op's names for its inputs ("data", "weight", ...), or none when its attrs cannot
    say."""
    try:
        return list(n.op.input_names(n.parsed))
    except (MXNetError, ValueError, TypeError, KeyError):
        return []
