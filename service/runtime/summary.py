"""Model summary as text: the rows of the graph facts' table (analysis.py: one row per op
node with output shape, parameter count, FLOPs) in the layout of `framework/gluon/summary.py`
(MXNet's). `Block.summary` needs a non-hybridized block and prints; a served model is
hybridized, so the table comes from its graph."""
from __future__ import annotations

from typing import Any

from ..errors import BadRequest
from .signature import IOSpec, concrete

_WIDTHS = (20, 42, 15)              # MXNet's columns; wider when a name or shape needs it


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
