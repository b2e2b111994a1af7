"""Graph compiler: plans (graph → straight-line steps), cached ops, optimisation passes."""
from . import backends  # noqa: F401  (registers the optimize_for pass pipelines)
from .cached_op import CachedOp  # noqa: F401
from .executor import bind_methods as _bind_executor
from .plan import Plan  # noqa: F401

_bind_executor()     # Symbol.bind / simple_bind run plans
