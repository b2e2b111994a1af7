"""MXNet 1.9.1's `mxnet.contrib.quantization`: INT8 graphs in MXNet's own vocabulary."""
from .calibrate import CalibrationError  # noqa: F401
