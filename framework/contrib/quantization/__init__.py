"""MXNet's `mxnet.contrib.quantization` (2.0's `contrib.quant`): INT8 graphs in MXNet's own
vocabulary (`quantize_v2` at the inputs, fused `_sg_mkldnn_conv` / `_sg_mkldnn_fully_connected`
nodes, `quantized_*` ops, `requantize` / `dequantize`), calibrated as MXNet calibrates them.
`quantize_net` takes a Gluon block; `quantize_model` a float Symbol and its parameters."""
from .api import quantize_net, quantize_net_v2  # noqa: F401
from .calibrate import CalibrationError  # noqa: F401
from .collectors import (CalibrationCollector, _LayerHistogramCollector,  # noqa: F401
                         _LayerOutputMinMaxCollector)
from .data import CalibrationDataError  # noqa: F401
from .errors import QuantizationError  # noqa: F401
from .symbolic import (_calibrate_quantized_sym, _quantize_params, _quantize_symbol,  # noqa: F401
                       calib_graph, quantize_graph, quantize_model, quantize_model_onednn)
