"""MXNet's `mxnet.contrib.amp.lists`: the op lists per target type (bfloat16 here)."""
from . import symbol_bf16  # noqa: F401
