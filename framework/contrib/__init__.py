"""MXNet's `mxnet.contrib`: INT8 quantization (`contrib.quantization`, also `contrib.quant` as
MXNet 2.0 names it) and mixed precision (`contrib.amp`, bfloat16)."""
from . import amp, quantization  # noqa: F401
from . import quantization as quant  # noqa: F401
