"""`mxnet.contrib.amp.lists.symbol_bf16`: the lists live with the operators (framework/ops/tensor/amp.py)."""
from ....ops.tensor.amp import (BF16_FP32_FUNCS, BF16_FUNCS, BF16_USE_FP32_PARAMS,  # noqa: F401
                         CONDITIONAL_FP32_FUNCS, FP32_FUNCS, WIDEST_TYPE_CASTS)

__all__ = ["BF16_FUNCS", "BF16_FP32_FUNCS", "BF16_USE_FP32_PARAMS", "FP32_FUNCS",
           "CONDITIONAL_FP32_FUNCS", "WIDEST_TYPE_CASTS"]
