"""V2 datatype names ↔ NumPy dtypes (and Triton model-config `TYPE_*` names)."""
from __future__ import annotations

import numpy as np

from ..errors import BadRequest

V2_TO_NUMPY: dict[str, np.dtype] = {
    "BOOL": np.dtype(np.bool_),
    "UINT8": np.dtype(np.uint8), "UINT16": np.dtype(np.uint16),
    "UINT32": np.dtype(np.uint32), "UINT64": np.dtype(np.uint64),
    "INT8": np.dtype(np.int8), "INT16": np.dtype(np.int16),
    "INT32": np.dtype(np.int32), "INT64": np.dtype(np.int64),
    "FP16": np.dtype(np.float16), "FP32": np.dtype(np.float32), "FP64": np.dtype(np.float64),
    "BYTES": np.dtype(object),
}
NUMPY_TO_V2: dict[np.dtype, str] = {v: k for k, v in V2_TO_NUMPY.items()}
NUMPY_TO_V2[np.dtype(np.bytes_)] = "BYTES"
NUMPY_TO_V2[np.dtype(np.str_)] = "BYTES"


def numpy_dtype(datatype: str, what: str = "") -> np.dtype:
    try:
        return V2_TO_NUMPY[datatype]
    except (KeyError, TypeError):
        where = f" for {what}" if what else ""
        raise BadRequest(f"unsupported datatype {datatype!r}{where}; supported: "
                         f"{', '.join(V2_TO_NUMPY)}") from None


def v2_datatype(dtype: np.dtype) -> str:
    dt = np.dtype(dtype)
    if dt.kind in ("S", "U", "O"):
        return "BYTES"
    try:
        return NUMPY_TO_V2[dt]
    except KeyError:
        raise BadRequest(f"dtype {dt} has no V2 datatype") from None


def triton_type(datatype: str) -> str:
    """V2 name → Triton model-config name (`FP32` → `TYPE_FP32`, `BYTES` → `TYPE_STRING`)."""
    return "TYPE_STRING" if datatype == "BYTES" else f"TYPE_{datatype}"


def from_triton_type(name: str) -> str:
    n = name[5:] if name.startswith("TYPE_") else name
    return "BYTES" if n == "STRING" else n
