"""The activation epilogue a fused GEMM (`_hs_conv2d`, `_hs_affine`, `_hs_dense`) computes in place
of an activation op: `(act_type, a_min, a_max)`, or None when it cannot (OpDef.epilogue)."""
from __future__ import annotations

from ..attrs import Attrs

_GEMM_ACTS = ("relu", "sigmoid", "tanh")   # Activation types the epilogue implements


def activation(a: Attrs) -> tuple | None:
    return (a.act_type, 0.0, 6.0) if a.act_type in _GEMM_ACTS else None


def relu(a: Attrs) -> tuple:
    return ("relu", 0.0, 6.0)


def sigmoid(a: Attrs) -> tuple:
    return ("sigmoid", 0.0, 6.0)


def clip(a: Attrs) -> tuple:
    lo = float("-inf") if a.a_min is None else float(a.a_min)
    hi = float("inf") if a.a_max is None else float(a.a_max)
    if lo == 0.0 and hi == float("inf"):
        return ("relu", 0.0, 6.0)
    return ("clip", lo, hi)
