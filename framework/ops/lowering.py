"""How an operator says it lowers to ONNX: the `OpDef.onnx` field and the `lowers` decorator.

It lives with the registry because a lowering is part of the op's entry; `framework.onnx`
(building, exporting, running models) reads it from there.

This module imports neither `onnx` nor `onnxruntime`: every op family module attaches its
lowerings at import time, also where those packages are not installed.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from ..base import MXNetError
from .registry import _OPS, OpDef


class Unsupported(Exception):
    """Raised by a lowering (or returned as a reason by its check) for what ONNX cannot express."""


class OnnxLoweringError(MXNetError, ValueError):
    """A graph cannot be lowered to ONNX; the message names the node and its op."""


# fn(ctx, node, inputs) -> output value name(s); check(attrs) -> reason or None
LowerFn = Callable[..., Any]
CheckFn = Callable[[Any], "str | None"]


@dataclass(frozen=True)
class OnnxLowering:
    """One op's lowering.

    `fn(ctx, node, inputs)` emits ONNX nodes through `ctx` (a `LoweringContext`) for graph node
    `node` whose input values are named `inputs`, and returns the ONNX value name of each output
    it produces, in order (a str for one). It may return fewer names than the op has outputs
    (hidden outputs such as BatchNorm's mean/var); a graph that reads a missing one is refused.
    `check(attrs)` returns why these parsed attrs cannot be lowered, or None: it is what
    `lowerable(node)` asks without building anything. A lowering may still raise `Unsupported`
    for what only shapes or dtypes reveal.
    """
    fn: LowerFn
    check: CheckFn | None = None

    def refusal(self, attrs) -> str | None:
        return self.check(attrs) if self.check is not None else None


def lowers(*ops: OpDef, check: CheckFn | None = None) -> Callable[[LowerFn], LowerFn]:
    """Decorator: `@lowers(conv_op, check=...)` attaches the function as those ops' lowering."""

    def deco(fn: LowerFn) -> LowerFn:
        for op in ops:
            op.onnx = OnnxLowering(fn, check)
        return fn

    return deco


def lowers_named(*names: str, check: CheckFn | None = None) -> Callable[[LowerFn], LowerFn]:
    """`lowers` for ops registered in a loop (no module-level OpDef): by any registered name."""
    return lowers(*(_OPS[n] for n in names), check=check)


def refuse_if(**conditions: Callable[[Any], bool]) -> CheckFn:
    """A check built from named predicates on the attrs: the first true one is the reason."""

    def check(a) -> str | None:
        for reason, pred in conditions.items():
            if pred(a):
                return reason.replace("_", " ")
        return None

    return check


def simple(onnx_op: str, **onnx_attrs) -> LowerFn:
    """A lowering to one ONNX node of the same inputs (unary math, Relu, Sigmoid…)."""

    def fn(ctx, node, inputs):
        return ctx.op(onnx_op, inputs, **onnx_attrs)

    fn.__doc__ = f"ONNX {onnx_op}"
    return fn
