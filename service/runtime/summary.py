"""Model summary as text: the rows of the graph facts' table (analysis.py: one row per op
node with output shape, parameter count, FLOPs) in the layout of `framework/gluon/summary.py`
(MXNet's). `Block.summary` needs a non-hybridized block and prints; a served model is
hybridized, so the table comes from its graph."""
from __future__ import annotations

from typing import Any

_WIDTHS = (20, 42, 15)              # MXNet's columns; wider when a name or shape needs it


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
    lines += ["=" * rule,
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
