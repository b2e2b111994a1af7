"""Graph compiler: plans (graph → straight-line steps), cached ops, optimisation passes, the
engine choice (`select_engine`) and the compiled model a server runs (`CompiledModel`)."""
from . import backends  # noqa: F401  (registers the optimize_for pass pipelines)
from .cached_op import CachedOp  # noqa: F401
from .compiled import CompiledModel, TensorInfo  # noqa: F401
from .engine import EngineChoice, select_engine  # noqa: F401
from .executor import bind_methods as _bind_executor
from .plan import Plan  # noqa: F401

_bind_executor()     # Symbol.bind / simple_bind run plans
