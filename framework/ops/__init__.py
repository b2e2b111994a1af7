"""Operator registry and the operator families: one module per family, grouped in subpackages
(tensor, numpy_api, nn, detection, image, quantized, compiled); engine internals in `_kernels`."""
from .registry import OpDef, all_ops, get_op, has_op, register, unique_ops  # noqa: F401
from .groups import OpGroup  # noqa: F401
# the intra-op thread knob is public (the server sets it per model); the pool itself is internal
from .parallel import intra_op_threads, set_intra_op_threads  # noqa: F401
