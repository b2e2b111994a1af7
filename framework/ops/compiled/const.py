"""`_hs_const`: a value folded at build time (compiler/passes/simplify.py). The value lives on the
graph node, not in the attrs; the plan binds it when it is built."""
from __future__ import annotations

from ..attrs import DType, Shape, Str
from ..registry import register


# the folded value's shape and dtype travel in the attrs, so shape inference needs no value
@register("_hs_const", attrs={"key": Str(""), "shape": Shape(()), "dtype": DType(None)}, inputs=(),
          infer_shape=lambda a, s: [tuple(a.shape)], infer_type=lambda a, d: [a.dtype])
def const(a):
    """A constant folded at build time (its value lives on the node, not in the attrs)."""
    raise RuntimeError("_hs_const nodes are bound to their value when the plan is built")
