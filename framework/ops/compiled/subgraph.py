"""The subgraph op: one node standing for a partitioned region of the graph (MXNet's `_sg_*`).

`optimize_for(x, backend='onnxruntime')` cuts the ONNX-expressible regions out of a graph
(compiler/passes/partition.py); each becomes one `_sg_onnxruntime` node whose `subgraphs[0]` is
the region and whose parsed attrs hold `runner`, the warm engine built for it at optimisation time
(framework/onnx/runtime.py: a callable over the node's inputs with the region's `symbol`). Shapes
and dtypes are inferred through the region (by its engine, which holds it), so the partitioned graph composes with every pass;
exports and op hooks see the region's own nodes (`expand`).
"""
from __future__ import annotations

import numpy as np

from ...base import OperatorError
from ..attrs import Attrs, Int, Str
from ..registry import register


def _runner(a: Attrs):
    runner = a.get("runner")
    if runner is None:
        raise OperatorError("a subgraph node has no engine: it is built by optimize_for "
                            "(a graph read back from JSON must be optimised again)")
    return runner


def _input_names(a: Attrs) -> list[str]:
    runner = a.get("runner")
    if runner is not None:
        return list(runner.symbol.list_inputs())
    return [f"data{i}" for i in range(a.num_inputs)]


def _infer_shape(a: Attrs, in_shapes: list) -> list:
    return _runner(a).infer_shapes(in_shapes)


def _infer_type(a: Attrs, in_dtypes: list) -> list:
    return _runner(a).infer_dtypes([np.dtype(d) for d in in_dtypes])


@register("_sg_onnxruntime",
          attrs={"num_inputs": Int(0), "num_outputs": Int(1), "engine": Str("onnxruntime")},
          inputs=_input_names, num_outputs=lambda a: a.num_outputs,
          infer_shape=_infer_shape, infer_type=_infer_type)
def sg_onnxruntime(a: Attrs, *inputs):
    """A partitioned region run by its engine (an ONNX Runtime session)."""
    return _runner(a)(*inputs)
