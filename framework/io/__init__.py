"""Parameter-file I/O (MXNet legacy NDArray lists, 2.x npz and single npy files) and MXNet's
`mx.io` data iterators (data_iter.py).

Everyone else should use :func:`load_params` / :func:`save_params`; the
format-specific readers and writers are exported for tools and tests.
"""
from .data_iter import DataBatch, DataDesc, DataIter, NDArrayIter
from .dtypes import (BFLOAT16, bfloat16_to_float32, dtype_flag, dtype_from_flag, dtype_name,
                     float32_to_bfloat16, held_dtype, round_to_bfloat16)
from .errors import ParamsFormatError
from .params_file import detect_format, load_params, save_params, split_arg_aux, strip_prefixes
from .params_legacy import read_legacy, write_legacy
from .params_npz import npy_bytes, read_npy, read_npz, write_npz

__all__ = [
    "ParamsFormatError", "DataDesc", "DataBatch", "DataIter", "NDArrayIter",
    "load_params", "save_params", "detect_format", "split_arg_aux", "strip_prefixes",
    "read_legacy", "write_legacy", "read_npz", "write_npz", "read_npy", "npy_bytes",
    "BFLOAT16", "dtype_flag", "dtype_from_flag", "dtype_name",
    "bfloat16_to_float32", "float32_to_bfloat16", "held_dtype", "round_to_bfloat16",
]
