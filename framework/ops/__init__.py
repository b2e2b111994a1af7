"""Operator registry and the operator families (one module per family)."""
from .registry import OpDef, all_ops, get_op, has_op, register, unique_ops  # noqa: F401
