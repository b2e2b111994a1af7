"""The operator registry: one `OpDef` per operator, found by any of its MXNet names.

An OpDef holds everything about an operator: its names (canonical, 1.x and 2.x aliases), the
attribute schema, input names and which inputs are mutated auxiliary states, output counts and
names, shape/dtype inference and the NumPy kernel. Imperative calls, tracing, loaded graphs,
summaries and op hooks all read this table; nothing implements an operator anywhere else.

Kernel convention: `kernel(attrs, *inputs)` takes parsed `Attrs` and NumPy arrays and returns one
array or a tuple of arrays (one per output, hidden outputs included). A kernel declared with
`out=True` also accepts `out=` (a preallocated array for output 0) and must write into it.
"""
from __future__ import annotations

import difflib
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as _np

from ..base import GraphFormatError, OperatorError
from .attrs import Attr, Attrs, format_value, parse_attrs

Shape = tuple
ShapeFn = Callable[[Attrs, list], list]


@dataclass(eq=False)
class OpDef:
    name: str
    kernel: Callable[..., Any]
    aliases: tuple[str, ...] = ()
    attrs: dict[str, Attr] = field(default_factory=dict)
    # input names, or a function of the parsed attrs (variadic ops, optional bias)
    inputs: Sequence[str] | Callable[[Attrs], Sequence[str]] = ("data",)
    aux: tuple[int, ...] = ()                      # input positions the op mutates (aux states)
    num_outputs: int | Callable[[Attrs], int] = 1  # all outputs, hidden ones included
    num_visible: int | Callable[[Attrs], int] | None = None
    output_names: Sequence[str] | None = None      # BatchNorm: output, mean, var
    infer_shape: ShapeFn | None = None             # (attrs, in_shapes) -> out_shapes
    infer_type: Callable[[Attrs, list], list] | None = None
    # (attrs, in_shapes) -> in_shapes with unknown parameter shapes filled in (weights of FC, conv…)
    infer_param_shapes: ShapeFn | None = None
    strict: bool = False                           # unknown (non-dunder) attr names are errors
    out: bool = False                              # kernel accepts out=
    flops: Callable[[Attrs, list, list], int] | None = None
    # its ONNX lowering (framework.onnx.lowering.OnnxLowering, set by `@lowers` at the end of
    # the op's module), or None where ONNX cannot express the op
    onnx: Any = None
    # the kernel runs the node's `subgraphs[0]` (a partitioned region, compiler/passes/
    # partition.py): the plan accepts such nodes and export expands them back
    runs_subgraph: bool = False
    doc: str = ""

    # -- attributes ---------------------------------------------------------------------------
    def parse_attrs(self, raw: dict[str, Any], node: str | None = None) -> Attrs:
        return parse_attrs(self.name, self.attrs, raw, self.strict, node)

    def format_attrs(self, parsed: dict[str, Any]) -> dict[str, str]:
        """String attrs as MXNet 2.x writes them (schema keys only, sorted)."""
        return {k: format_value(parsed[k]) for k in sorted(parsed)
                if k in self.attrs or not isinstance(parsed[k], (dict, list))}

    # -- structure ----------------------------------------------------------------------------
    def input_names(self, a: Attrs) -> list[str]:
        return list(self.inputs(a) if callable(self.inputs) else self.inputs)

    def n_outputs(self, a: Attrs) -> int:
        return self.num_outputs(a) if callable(self.num_outputs) else self.num_outputs

    def n_visible(self, a: Attrs) -> int:
        v = self.num_visible
        if v is None:
            return self.n_outputs(a)
        return v(a) if callable(v) else v

    def output_name(self, a: Attrs, i: int) -> str:
        if self.output_names is not None:
            return self.output_names[i]
        return "output" if self.n_outputs(a) == 1 else f"output{i}"

    # -- inference ----------------------------------------------------------------------------
    def shapes(self, a: Attrs, in_shapes: list[Shape]) -> list[Shape]:
        """Output shapes; without an `infer_shape` rule the kernel runs on zeros (fallback)."""
        if self.infer_shape is not None:
            return [tuple(s) for s in self.infer_shape(a, list(in_shapes))]
        outs = self.kernel(a, *[_np.zeros(s, _np.float32) for s in in_shapes])
        outs = outs if isinstance(outs, tuple) else (outs,)
        return [tuple(o.shape) for o in outs]

    def dtypes(self, a: Attrs, in_dtypes: list) -> list:
        if self.infer_type is not None:
            return list(self.infer_type(a, list(in_dtypes)))
        first = in_dtypes[0] if in_dtypes else _np.dtype(_np.float32)
        return [first] * self.n_outputs(a)


_OPS: dict[str, OpDef] = {}


def register(name: str, *aliases: str, **kw) -> Callable[[Callable], OpDef]:
    """Decorator: `@register('FullyConnected', '_npx_fully_connected', attrs={...})` on a kernel."""

    def deco(kernel: Callable) -> OpDef:
        op = OpDef(name=name, kernel=kernel, aliases=tuple(aliases), doc=kernel.__doc__ or "", **kw)
        for n in (name, *aliases):
            if n in _OPS:
                raise RuntimeError(f"operator name {n!r} registered twice")
            _OPS[n] = op
        return op

    return deco


def alias(op: OpDef, *names: str) -> None:
    for n in names:
        if n in _OPS:
            raise RuntimeError(f"operator name {n!r} registered twice")
        _OPS[n] = op
    op.aliases = op.aliases + tuple(names)


def has_op(name: str) -> bool:
    _ensure_loaded()
    return name in _OPS


def get_op(name: str, node: str | None = None) -> OpDef:
    """Look an operator up by any MXNet name; an unknown name lists the nearest supported ones."""
    _ensure_loaded()
    op = _OPS.get(name)
    if op is None:
        near = difflib.get_close_matches(name, list(_OPS), n=5, cutoff=0.5)
        where = f" (node '{node}')" if node is not None else ""
        hint = f"; nearest supported: {', '.join(near)}" if near else ""
        raise GraphFormatError(f"Operator {name}{where} is not supported by hybridserve{hint}")
    return op


def all_ops() -> dict[str, OpDef]:
    """Every registered name → OpDef (aliases included)."""
    _ensure_loaded()
    return dict(_OPS)


def unique_ops() -> list[OpDef]:
    _ensure_loaded()
    seen: dict[int, OpDef] = {}
    for op in _OPS.values():
        seen.setdefault(id(op), op)
    return list(seen.values())


_loaded = False
_load_lock = threading.RLock()


def _ensure_loaded() -> None:
    """Import every op family once; thread-safe (servers load models from several threads)."""
    global _loaded
    if _loaded:
        return
    with _load_lock:               # re-entrant: family modules may look ops up while importing
        if not _loaded:
            from . import catalog  # noqa: F401  (imports every op family module)
            _loaded = True


def check_inputs(op: OpDef, a: Attrs, n: int, node: str | None = None) -> None:
    want = len(op.input_names(a))
    if n != want:
        where = f"node '{node}' " if node else ""
        raise OperatorError(f"{where}(op {op.name}) expects {want} inputs "
                            f"({', '.join(op.input_names(a))}), got {n}")
