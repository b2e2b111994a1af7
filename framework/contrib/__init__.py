"""MXNet's `mxnet.contrib`: INT8 quantization (`contrib.quantization.quantize_net`)."""
from . import quantization  # noqa: F401
