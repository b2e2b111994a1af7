"""Graph compiler: plans (graph → straight-line steps), cached ops, optimisation passes."""
from .cached_op import CachedOp  # noqa: F401
from .plan import Plan  # noqa: F401
