"""Model summary from the graph: one row per op node (output shape, parameter count, FLOPs).

`Block.summary` needs a non-hybridized block and prints; a served model is hybridized, so the
table is built from the graph with shape inference and each OpDef's `flops` rule, and rendered
in the same text layout as `framework/gluon/summary.py` (MXNet's).
"""
from __future__ import annotations

import math
from typing import Any

from framework.symbol.infer import infer_shapes

from ..errors import BadRequest
from .signature import IOSpec, concrete

_WIDTHS = (20, 42, 15)              # MXNet's columns; wider when a name or shape needs it


def _size(shape) -> int:
    return int(math.prod(shape)) if shape is not None else 0


def parse_shapes(texts: list[str], names: list[str], model: str) -> dict[str, tuple[int, ...]]:
    """`["data:1,3,224,224", ...]` → {input: shape}; the name may be left out when the model
    has one input. A 400 naming the model and the input for anything else."""
    out: dict[str, tuple[int, ...]] = {}
    for text in texts:
        name, sep, dims = text.rpartition(":")
        if not sep:
            if len(names) != 1:
                raise BadRequest(f"shape '{text[:100]}': model '{model}' has inputs {names}; "
                                 "write shape=<input>:<d0>,<d1>,...")
            name = names[0]
        if name not in names:
            raise BadRequest(f"shape '{text[:100]}': model '{model}' has no input '{name[:100]}'"
                             f" (inputs: {names})")
        try:
            shape = tuple(int(d) for d in dims.split(","))
        except ValueError:
            shape = ()
        if not shape or any(d < 1 or d > 1 << 20 for d in shape):
            raise BadRequest(f"shape '{text[:100]}': expected positive integers such as "
                             f"{name}:1,3,224,224")
        out[name] = shape
    return out


def input_shapes(specs: list[IOSpec], batch: int, given: dict[str, tuple[int, ...]],
                 model: str) -> tuple[dict[str, tuple[int, ...]], list[str]]:
    """The concrete input shapes a summary is computed at, and a warning for each input whose
    shape is unknown (free dims beyond the batch, or no shape at all, and none given): never a
    guess such as a 1x1 image."""
    known, warnings = {}, []
    for s in specs:
        if s.name in given:
            shape = given[s.name]
            if s.shape is not None and (len(shape) != len(s.shape) or any(
                    d >= 0 and d != g for d, g in zip(s.shape, shape))):
                raise BadRequest(f"shape {list(shape)} does not fit input '{s.name}' of model "
                                 f"'{model}', declared {list(s.shape)}")
            known[s.name] = shape
        elif s.shape is not None and all(d >= 0 for d in s.shape[1:]):
            known[s.name] = concrete(s.shape, batch, 1)
        else:
            warnings.append(f"input '{s.name}' has shape "
                            f"{list(s.shape) if s.shape is not None else 'unknown'}: the shapes "
                            "and FLOPs that depend on it are unknown (not guessed); give it, "
                            f"e.g. shape={s.name}:{_example(s, batch)}")
    return known, warnings


def _example(s: IOSpec, batch: int) -> str:
    """`1,3,N,N`: the batch, the declared dims, N for each free one."""
    rest = ",".join(str(d) if d >= 0 else "N" for d in s.shape[1:]) if s.shape else "..."
    return f"{batch},{rest}"


def graph_table(sym, known: dict[str, tuple], data_names: set[str],
                aux_names: set[str] | None = None) -> dict[str, Any]:
    """Rows + totals for the graph given the data shapes known (`known` may also hold
    parameter shapes); what depends on an unknown shape stays unknown (None)."""
    try:
        shapes = infer_shapes(sym, known, tolerant=True)
    except Exception:  # noqa: BLE001 - a summary without shapes is still useful
        shapes = {}
    aux_names = aux_names if aux_names is not None else set(sym.list_auxiliary_states())
    rows, seen = [], set()
    total = trainable = shared = flops_total = 0
    flops_known = True
    for n in sym.topo():
        if n.is_var:
            continue
        ins = [shapes.get((id(s), i)) for s, i in n.inputs]
        outs = [shapes.get((id(n), i)) for i in range(n.num_outputs())]
        n_params = n_train = n_shared = 0
        for (s, i), shp in zip(n.inputs, ins):
            if not s.is_var or s.name in data_names:
                continue
            size = _size(shp)
            n_params += size
            if s.name not in aux_names:
                n_train += size
            if s.name in seen:
                n_shared += size
            seen.add(s.name)
        fl = None
        if n.op is not None and n.op.flops is not None:
            if all(x is not None for x in ins + outs):
                try:
                    fl = int(n.op.flops(n.parsed, ins, outs))
                except Exception:  # noqa: BLE001
                    fl = None
            if fl is None:
                flops_known = False
            else:
                flops_total += fl
        vis = [list(o) if o is not None else None for o in outs[: n.num_visible()]]
        rows.append({"name": n.name, "op": n.opname,
                     "output_shape": vis[0] if len(vis) == 1 else vis,
                     "params": n_params, "flops": fl})
        total += n_params
        trainable += n_train
        shared += n_shared
    return {"layers": rows,
            "total_params": total, "trainable_params": trainable,
            "non_trainable_params": total - trainable, "shared_params": shared,
            "unique_params": total - shared,
            "flops": flops_total, "flops_complete": flops_known}


def _shape_str(shape) -> str:
    if shape is None:
        return "?"
    if shape and (isinstance(shape[0], list) or shape[0] is None):
        return ", ".join(_shape_str(s) for s in shape)
    return str(tuple(shape))


def render_text(summary: dict[str, Any]) -> str:
    """MXNet's summary layout (80-column rules, `{:>20}  {:>42} {:>15}` rows), its columns
    widened to the longest layer name and shape so long names never break the table."""
    shapes = ", ".join(_shape_str(i["shape"]) for i in summary["inputs"])
    rows = [("Layer (type)", "Output Shape", "Param #"), None, ("Input", shapes, 0)]
    rows += [(f"{r['name']}({r['op']})", _shape_str(r["output_shape"]), r["params"])
             for r in summary["layers"]]
    widths = [max([w] + [len(str(r[k])) for r in rows if r is not None])
              for k, w in enumerate(_WIDTHS)]
    line = "{:>%d}  {:>%d} {:>%d}" % tuple(widths)
    rule = max(80, sum(widths) + 3)
    lines = ["-" * rule] + ["=" * rule if r is None else line.format(*r) for r in rows]
    lines += ["=" * rule] + [f"Warning: {w}" for w in summary.get("warnings", ())]
    lines += [
              "Parameters in forward computation graph, duplicate included",
              f"   Total params: {summary['total_params']}",
              f"   Trainable params: {summary['trainable_params']}",
              f"   Non-trainable params: {summary['non_trainable_params']}",
              f"Shared params in forward computation graph: {summary['shared_params']}",
              f"Unique parameters in model: {summary['unique_params']}",
              f"Estimated FLOPs (batch {summary['batch_size']}): {summary['flops']}"
              + ("" if summary["flops_complete"] else " (lower bound: some ops have no estimate)"),
              "-" * rule]
    return "\n".join(lines) + "\n"
