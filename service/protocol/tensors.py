"""Tensor codecs: JSON `data` ↔ NumPy, Triton binary buffers ↔ NumPy.

Binary inputs become zero-copy `np.frombuffer` views of the request body; JSON numbers go
through one `np.array(..., dtype)` call (nested or flat lists both work). BYTES use Triton's
framing: per element a 4-byte little-endian length, then the bytes.
"""
from __future__ import annotations

import math
import struct

import numpy as np

from ..errors import BadRequest
from .datatypes import numpy_dtype

_U32 = struct.Struct("<I")


def check_shape(name: str, shape, max_elements: int) -> tuple[int, ...]:
    if not isinstance(shape, list) or not all(
            isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape):
        raise BadRequest(f"input '{name}': 'shape' must be a list of non-negative integers, "
                         f"got {shape!r}"[:300])
    if len(shape) > 32:
        raise BadRequest(f"input '{name}': shape has {len(shape)} dimensions (limit 32)")
    n = math.prod(shape)
    if n > max_elements:
        raise BadRequest(f"input '{name}': {n} elements exceed the limit of {max_elements}")
    return tuple(shape)


def decode_json(name: str, datatype: str, shape: tuple[int, ...], data) -> np.ndarray:
    """A JSON `data` field (flat row-major or nested) → array of `shape`."""
    dt = numpy_dtype(datatype, f"input '{name}'")
    count = math.prod(shape)
    if not isinstance(data, list):
        data = [data]
    try:
        if datatype == "BYTES":
            arr = np.array(data, dtype=object)
            flat = arr.reshape(-1)
            for i, v in enumerate(flat):
                if isinstance(v, str):
                    flat[i] = v.encode("utf-8")
                elif not isinstance(v, bytes):
                    raise BadRequest(f"input '{name}': BYTES elements must be strings")
        elif datatype == "BOOL":
            arr = np.array(data)
            if arr.size and arr.dtype != np.bool_:
                raise BadRequest(f"input '{name}': BOOL elements must be true/false")
            arr = arr.astype(np.bool_, copy=False)
        else:
            arr = np.array(data, dtype=dt)
    except BadRequest:
        raise
    except (ValueError, TypeError, OverflowError) as e:
        raise BadRequest(f"Unable to parse 'data' of input '{name}' as {datatype}: {e}"[:400]) from None
    if arr.size != count:
        raise wrong_count(name, shape, arr.size)
    return arr.reshape(shape)


def wrong_count(name: str, shape: tuple[int, ...], got: int) -> BadRequest:
    """A `data` field holding another number of elements than its shape needs."""
    return BadRequest(f"Failed to parse 'data' field of input '{name}': shape {list(shape)} "
                      f"needs {math.prod(shape)} elements, got {got}")


def decode_binary(name: str, datatype: str, shape: tuple[int, ...], buf: memoryview) -> np.ndarray:
    """Raw little-endian bytes → array (a read-only view of the request body when aligned)."""
    count = math.prod(shape)
    if datatype == "BYTES":
        return _decode_bytes(name, shape, count, buf)
    dt = numpy_dtype(datatype, f"input '{name}'")
    if len(buf) != count * dt.itemsize:
        raise BadRequest(f"unexpected size for input '{name}', expecting {count * dt.itemsize} "
                         f"bytes for shape {list(shape)} {datatype}, got {len(buf)}")
    if datatype == "BOOL":
        raw = np.frombuffer(buf, dtype=np.uint8)
        if raw.size and raw.max() > 1:
            raise BadRequest(f"input '{name}': BOOL bytes must be 0 or 1")
        return raw.view(np.bool_).reshape(shape)
    arr = np.frombuffer(buf, dtype=dt)
    if not arr.flags.aligned:          # kernels are faster on aligned memory (and the flag
        arr = arr.copy()               # costs nothing where `arr.ctypes` costs µs a request)
    return arr.reshape(shape)


def _decode_bytes(name: str, shape, count: int, buf: memoryview) -> np.ndarray:
    if count * 4 > len(buf):        # each element has its 4-byte length: refuse before allocating
        raise BadRequest(f"input '{name}': {count} BYTES elements needs at least {count * 4} "
                         f"bytes, got {len(buf)}")
    out = np.empty(count, dtype=object)
    pos, end = 0, len(buf)
    for i in range(count):
        if pos + 4 > end:
            raise BadRequest(f"input '{name}': BYTES data ends inside element {i}")
        (n,) = _U32.unpack_from(buf, pos)
        pos += 4
        if pos + n > end:
            raise BadRequest(f"input '{name}': BYTES element {i} claims {n} bytes past the end")
        out[i] = bytes(buf[pos:pos + n])
        pos += n
    if pos != end:
        raise BadRequest(f"input '{name}': {end - pos} unexpected trailing bytes")
    return out.reshape(shape)


def encode_json(arr: np.ndarray, datatype: str):
    """Array → flat row-major JSON value (orjson serialises numeric arrays natively)."""
    if datatype == "BYTES":
        return [_bytes_to_str(v) for v in arr.reshape(-1)]
    flat = arr.reshape(-1)
    if not flat.flags.c_contiguous:
        flat = np.ascontiguousarray(flat)
    return flat


def _bytes_to_str(v) -> str:
    if isinstance(v, bytes):
        return v.decode("utf-8", errors="replace")
    return str(v)


def encode_binary(arr: np.ndarray, datatype: str) -> bytes | memoryview:
    if datatype == "BYTES":
        parts = []
        for v in arr.reshape(-1):
            b = v if isinstance(v, bytes) else str(v).encode("utf-8")
            parts.append(_U32.pack(len(b)))
            parts.append(b)
        return b"".join(parts)
    a = np.ascontiguousarray(arr)
    if a.dtype.byteorder == ">":
        a = a.astype(a.dtype.newbyteorder("<"))
    return memoryview(a).cast("B") if a.size else b""
