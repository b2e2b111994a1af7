"""MXNet 1.9.1's `mxnet.contrib.quantization`: INT8 graphs in MXNet's own vocabulary
(`quantize_v2` at the inputs, fused `_sg_mkldnn_conv` / `_sg_mkldnn_fully_connected` nodes,
`quantized_*` ops, `dequantize` at the outputs), calibrated as MXNet calibrates them."""
from .api import QuantizationError, quantize_net, quantize_net_v2  # noqa: F401
from .calibrate import CalibrationError  # noqa: F401
from .data import CalibrationDataError  # noqa: F401
