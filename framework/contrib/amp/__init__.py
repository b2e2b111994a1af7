"""MXNet 1.9.1's `mxnet.contrib.amp` for inference in bfloat16 (docs/amp.md)."""
from . import lists  # noqa: F401
from .amp import (bfloat16, convert_hybrid_block, convert_model, convert_symbol,  # noqa: F401
                  init, list_conditional_fp32_ops, list_fp32_ops, list_lp16_fp32_ops,
                  list_lp16_ops, list_widest_type_cast)

__all__ = ["bfloat16", "init", "convert_symbol", "convert_model", "convert_hybrid_block",
           "list_lp16_ops", "list_fp32_ops", "list_lp16_fp32_ops", "list_conditional_fp32_ops",
           "list_widest_type_cast"]
