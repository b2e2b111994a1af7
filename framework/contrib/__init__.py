"""MXNet's `mxnet.contrib`: INT8 quantization (`contrib.quantization.quantize_net`) and mixed
precision (`contrib.amp`, bfloat16)."""
from . import amp, quantization  # noqa: F401
