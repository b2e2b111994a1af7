"""A model's input/output signature: from its config where given, else inferred from the graph.

MXNet exports rarely record data shapes, so defaults are read off the first op that consumes
each input, as its registry entry derives them from its weight (`OpDef.data_shape`:
FullyConnected → `[-1, in_units]`, Convolution → `[-1, C, -1, -1]`); anything else
stays unknown-rank (`shape: None`, accepted as is). Output shapes come from the graph facts
probed at two batch sizes: dims that move with the free input dims are reported as -1.
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass

import numpy as np

from framework.base import MXNetError
from framework.io.dtypes import dtype_from_flag
from framework.ops.groups import OpGroup

from ..protocol.datatypes import V2_TO_NUMPY, v2_datatype
from ..repository.config import TensorSpec
from .analysis import GraphFacts

_TRACED = re.compile(r"^node_\d+_output\d*$")
_PARAM_SUFFIXES = ("weight", "bias", "gamma", "beta", "running_mean", "running_var",
                   "moving_mean", "moving_var", "alpha", "parameters", "state", "state_cell")


@dataclass
class IOSpec:
    name: str
    datatype: str
    shape: tuple[int, ...] | None      # -1 = free; None = any shape
    flatten_units: int = 0             # inferred FC(flatten) input: any shape with this many per row

    @property
    def dtype(self) -> np.dtype:
        return V2_TO_NUMPY[self.datatype]

    def public(self) -> dict:
        return {"name": self.name, "datatype": self.datatype,
                "shape": list(self.shape) if self.shape is not None else [-1]}

    def to_spec(self, extras: dict | None = None) -> TensorSpec:
        """As a config entry; `extras`: declared preprocessing / labels to keep."""
        return TensorSpec(name=self.name, datatype=self.datatype,
                          shape=list(self.shape) if self.shape is not None else None,
                          **(extras or {}))


# attributes only a parameter's variable carries (Gluon's export, MXNet's FixParsing); a data
# variable may carry __shape__ (`sym.var('data', shape=...)`), so it only counts as one when
# no params file says otherwise
_PARAM_ATTRS = ("__init__", "__lr_mult__", "__wd_mult__")


def looks_like_param(name: str) -> bool:
    """A parameter's name: `fc1_weight` (1.x), `0.weight` / `features.0.bias` (2.x)."""
    last = name.rsplit(".", 1)[-1]
    return last in _PARAM_SUFFIXES or last.rsplit("_", 1)[-1] in _PARAM_SUFFIXES or name.endswith(
        ("running_mean", "running_var", "moving_mean", "moving_var"))


def param_vars(sym, names: list[str], has_params: bool) -> list[str]:
    """Which of the graph inputs `names` are parameters (SymbolBlock.imports would make them
    parameters, not data): a parameter's name or attributes, or — without a params file —
    a declared `__shape__`."""
    attrs = {n.name: n.attrs for n in sym.topo() if n.is_var}
    marks = _PARAM_ATTRS if has_params else (*_PARAM_ATTRS, "__shape__")
    return [n for n in names if looks_like_param(n)
            or any(a in attrs.get(n, {}) for a in marks)]


def _through_casts(node):
    """The tensor behind shape-preserving casts (a bf16 model's `amp_cast` of a weight)."""
    while not node.is_var and node.op.name in OpGroup.PASSES_SHAPE and node.inputs:
        node = node.inputs[0][0]
    return node


def default_input(sym, name: str, params: dict[str, np.ndarray]) -> IOSpec:
    var = next(n for n in sym.topo() if n.is_var and n.name == name)
    datatype = "FP32"
    if "__dtype__" in var.attrs:
        try:
            datatype = v2_datatype(dtype_from_flag(int(var.attrs["__dtype__"])))
        except (ValueError, KeyError, TypeError, MXNetError):   # a hint only
            pass
    src = var
    for n in sym.topo():
        if n.is_var or not n.inputs or n.inputs[0][0] is not src:
            continue
        if n.op.name in OpGroup.PASSES_SHAPE:   # an INT8 model's quantize, a bf16 amp_cast: read on
            src = n
            continue
        w = params.get(_through_casts(n.inputs[1][0]).name) if len(n.inputs) > 1 else None
        if w is None:
            break
        hint = n.op.data_shape(n.parsed, w.shape) if n.op.data_shape is not None else None
        if hint is not None:
            return IOSpec(name, datatype, hint[0], flatten_units=hint[1])
        break
    return IOSpec(name, datatype, None)


def concrete(shape: tuple[int, ...], batch: int, free: int) -> tuple[int, ...]:
    """Replace free dims: the first (batch) by `batch`, the others by `free`."""
    return tuple((batch if i == 0 else free) if d == -1 else d for i, d in enumerate(shape))


MAX_FREE, FREE_SEARCH_S = 1024, 2.0     # bounds of the search for a size the graph accepts


def example_free(facts: GraphFacts, inputs: list[IOSpec], batch: int = 1) -> int:
    """The smallest size for the free dims beyond the batch at which the graph runs: 1 for most
    (a global pooling takes any size), but a conv → Flatten → Dense graph (its weight fixes the
    flattened size) accepts one size only, which the warm-up and its engine checks must use.
    Square (one size for every free dim), found by shape inference alone, bounded in count and
    time; 1 when none is found (the warm-up then says why it cannot run)."""
    if not any(d == -1 for s in inputs if s.shape for d in s.shape[1:]):
        return 1
    deadline = time.perf_counter() + FREE_SEARCH_S
    for free in range(1, MAX_FREE + 1):
        if facts.accepts({s.name: concrete(s.shape, batch, free) for s in inputs
                          if s.shape is not None}):
            return free
        if time.perf_counter() > deadline:
            break
    return 1


def infer_outputs(facts: GraphFacts, inputs: list[IOSpec], names: list[str]) -> list[IOSpec]:
    probes = []
    if all(s.shape is not None for s in inputs):
        for batch, free in ((1, 1), (2, 1), (2, 2)):
            probes.append(facts.output_shapes({s.name: concrete(s.shape, batch, free)
                                               for s in inputs}))
    dts = facts.dtypes({s.name: s.dtype for s in inputs})
    out_dt = [dts.get((id(n), i)) for n, i in facts.sym.outputs]
    specs = []
    for k, name in enumerate(names):
        shapes = [p[k] for p in probes if p[k] is not None]
        shape = None
        if shapes and all(len(s) == len(shapes[0]) for s in shapes):
            shape = tuple(-1 if len({s[d] for s in shapes}) > 1 else shapes[0][d]
                          for d in range(len(shapes[0])))
        dt = out_dt[k]
        specs.append(IOSpec(name, v2_datatype(dt) if dt is not None else "FP32", shape))
    return specs


def output_names(sym) -> list[str]:
    """Graph output names, made unique (two heads can share a node name). A traced graph's
    heads are named after MXNet 2.x's node counter (`node_2_output`), which nobody can guess:
    those become `output` (`output_<k>` by position when there are several)."""
    raw = sym.list_outputs()
    raw = [(("output" if len(raw) == 1 else f"output_{k}") if _TRACED.match(nm) else nm)
           for k, nm in enumerate(raw)]
    names, seen = [], {}
    for nm in raw:
        k = seen.get(nm, 0)
        seen[nm] = k + 1
        names.append(nm if k == 0 else f"{nm}_{k}")
    return names
