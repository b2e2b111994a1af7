"""The error a bad quantization argument raises (a ValueError, as MXNet raises)."""
from ...base import MXNetError


class QuantizationError(MXNetError, ValueError):
    """A bad argument to `quantize_net` / `quantize_model` (the message names it)."""
