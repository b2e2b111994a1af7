"""`_hs_const`: a value folded at build time (compiler/passes/simplify.py). The value lives on the
graph node, not in the attrs; the plan binds it when it is built."""
from __future__ import annotations

from .attrs import Str
from .registry import register


@register("_hs_const", attrs={"key": Str("")}, inputs=())
def const(a):
    """A constant folded at build time (its value lives on the node, not in the attrs)."""
    raise RuntimeError("_hs_const nodes are bound to their value when the plan is built")
