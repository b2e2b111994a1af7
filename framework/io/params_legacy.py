"""MXNet legacy binary NDArray-list files (1.x ``.params``, ``mx.nd.save``).

Layout (all little-endian): u64 magic 0x112, u64 reserved 0, u64 N, N array
records, u64 K (0 or N), K names (u64 length + UTF-8 bytes).  Records come in
four variants chosen by their first u32 (v0, V1, V2, V3), as MXNet's
`NDArray::Load` (src/ndarray/ndarray.cc) reads them.

Reader policy (the input may be hostile):

* every size is validated against the bytes that remain *before* anything is
  allocated, so memory use is bounded by the input size and malformed input
  fails fast with :class:`ParamsFormatError`;
* "none" arrays (V2 ``ndim 0``/``-1``, V3 ``ndim -1``) load as ``None``;
* v0/V1 records with ``ndim 0`` load as 0-d scalars (what MXNet 1.9 does);
* sparse (row_sparse / csr) records are parsed but rejected with an error
  naming the key: densifying could allocate far more than the file holds;
* duplicate names and trailing bytes after the names are rejected;
* a file with N = 0 loads as ``{}`` (there are no names to tell list from dict).
"""
from __future__ import annotations

import struct
import sys
import warnings
from collections.abc import Mapping, Sequence
from typing import Any, Union

import numpy as np

from .dtypes import FLAG_TO_DTYPE, FLAG_TO_NAME, MAX_NDIM, storable_flag
from .errors import ParamsFormatError

LIST_MAGIC = 0x112
V1_MAGIC = 0xF993FAC8
V2_MAGIC = 0xF993FAC9
V3_MAGIC = 0xF993FACA
_STYPES = {0: "default", 1: "row_sparse", 2: "csr"}
_MIN_RECORD = 12  # smallest record: V2 magic + stype + ndim 0 ("none")
_NOT_IN_1X = (8, 9, 10, 11)  # int16/uint16/uint32/uint64: checked, MXNet 1.9.1 rejects them

ArrayDict = dict[str, Union[np.ndarray, None]]
ArrayList = list[Union[np.ndarray, None]]


class _Sparse:
    """Placeholder for a parsed sparse record; turned into an error once its name is known."""

    __slots__ = ("stype", "index")

    def __init__(self, stype: int, index: int) -> None:
        self.stype, self.index = stype, index


class _Cursor:
    """Bounds-checked little-endian reader over a byte buffer."""

    __slots__ = ("buf", "pos", "source", "where")

    def __init__(self, buf: memoryview, source: str) -> None:
        self.buf, self.pos, self.source, self.where = buf, 0, source, "header"

    @property
    def remaining(self) -> int:
        return len(self.buf) - self.pos

    def fail(self, what: str, at: int | None = None) -> ParamsFormatError:
        off = self.pos if at is None else at
        return ParamsFormatError(f"{self.source}: {self.where} at offset {off}: {what}")

    def _unpack(self, fmt: str, size: int, what: str) -> int:
        if self.remaining < size:
            raise self.fail(f"truncated: need {size} bytes for {what}, {self.remaining} left")
        (v,) = struct.unpack_from(fmt, self.buf, self.pos)
        self.pos += size
        return v

    def u32(self, what: str) -> int:
        return self._unpack("<I", 4, what)

    def i32(self, what: str) -> int:
        return self._unpack("<i", 4, what)

    def u64(self, what: str) -> int:
        return self._unpack("<Q", 8, what)

    def i64(self, what: str) -> int:
        return self._unpack("<q", 8, what)

    def take(self, n: int, what: str) -> memoryview:
        if n < 0 or n > self.remaining:
            raise self.fail(f"truncated: {what} needs {n} bytes, {self.remaining} left")
        out = self.buf[self.pos:self.pos + n]
        self.pos += n
        return out


def _shape(cur: _Cursor, ndim: int, dim_fmt: str, none_ndims: tuple[int, ...]) -> tuple[int, ...] | None:
    """Read ``ndim`` dims after an already-read ndim; ``None`` means a "none" array."""
    if ndim in none_ndims:
        return None
    if ndim < 0 or ndim > MAX_NDIM:
        raise cur.fail(f"invalid ndim {ndim} (must be 0..{MAX_NDIM})", cur.pos - 4)
    size = 4 if dim_fmt == "u32" else 8
    if ndim * size > cur.remaining:
        raise cur.fail(f"truncated: {ndim} dims need {ndim * size} bytes, {cur.remaining} left")
    read = cur.u32 if dim_fmt == "u32" else cur.i64
    dims = tuple(read("dim") for _ in range(ndim))
    if any(d < 0 for d in dims):
        raise cur.fail(f"negative dimension in shape {dims}")
    return dims


def _payload_size(cur: _Cursor, shape: tuple[int, ...], itemsize: int, what: str) -> int:
    """Byte size of a C-order block, checked against the remaining input (no allocation)."""
    count = 1
    nominal = itemsize  # numpy also rejects zero-size shapes whose other dims overflow
    for d in shape:
        count *= d
        nominal *= max(d, 1)
    if nominal > sys.maxsize:
        raise cur.fail(f"{what} shape {shape} is too large")
    nbytes = count * itemsize
    if nbytes > cur.remaining:
        raise cur.fail(f"{what} shape {shape} needs {nbytes} bytes but only {cur.remaining} remain")
    return nbytes


def _dtype(cur: _Cursor, flag: int) -> np.dtype:
    dt = FLAG_TO_DTYPE.get(flag)
    if dt is None:
        raise cur.fail(f"unknown dtype flag {flag}", cur.pos - 4)
    return dt


def _dense(cur: _Cursor, shape: tuple[int, ...]) -> np.ndarray:
    """ctx, dtype flag and raw data of a dense record, returned as an owned C-order array."""
    cur.i32("ctx dev_type")
    cur.i32("ctx dev_id")  # context is irrelevant on a CPU-only NumPy runtime
    dt = _dtype(cur, cur.i32("dtype flag"))
    nbytes = _payload_size(cur, shape, dt.itemsize, "array")
    raw = cur.take(nbytes, "array data")
    if dt.kind == "b":  # normalise non-0/1 bytes so the result is a well-formed bool array
        return (np.frombuffer(raw, np.uint8) != 0).reshape(shape)
    arr = np.frombuffer(raw, dt).reshape(shape)
    return arr.copy() if dt.isnative else arr.astype(dt.newbyteorder("="))  # owned, writable


def _skip_sparse(cur: _Cursor, stype: int, index: int) -> _Sparse:
    """Walk over a V2 sparse record so later records and the names can still be read."""
    storage = _shape(cur, cur.i32("storage ndim"), "i64", ())
    shape = _shape(cur, cur.i32("ndim"), "i64", (0, -1))
    if shape is None:
        return _Sparse(stype, index)
    cur.i32("ctx dev_type")
    cur.i32("ctx dev_id")
    dt = _dtype(cur, cur.i32("dtype flag"))
    aux = []
    for _ in range(1 if stype == 1 else 2):
        adt = _dtype(cur, cur.i32("aux dtype flag"))
        ashape = _shape(cur, cur.i32("aux ndim"), "i64", ())
        aux.append((adt, ashape))
    if not storage or storage == (0,):  # placeholder: derive from the aux shapes
        rows = aux[-1][1][0] if aux[-1][1] else 0
        storage = (rows, *shape[1:]) if stype == 1 else (rows,)
    cur.take(_payload_size(cur, storage, dt.itemsize, "sparse data"), "sparse data")
    for adt, ashape in aux:
        cur.take(_payload_size(cur, ashape, adt.itemsize, "aux"), "aux data")
    return _Sparse(stype, index)


def _record(cur: _Cursor, index: int) -> np.ndarray | _Sparse | None:
    first = cur.u32("record magic")
    if first in (V2_MAGIC, V3_MAGIC):
        v3 = first == V3_MAGIC
        stype = cur.i32("storage type")
        if stype not in _STYPES:
            raise cur.fail(f"invalid storage type {stype}", cur.pos - 4)
        if v3 and stype != 0:
            raise cur.fail(f"V3 record with non-dense storage type {_STYPES[stype]}", cur.pos - 4)
        if stype != 0:
            return _skip_sparse(cur, stype, index)
        shape = _shape(cur, cur.i32("ndim"), "i64", (-1,) if v3 else (0, -1))
    elif first == V1_MAGIC:
        shape = _shape(cur, cur.i32("ndim"), "i64", ())
    else:  # v0: the u32 is ndim itself, dims are u32
        if first > MAX_NDIM:
            raise cur.fail(f"unknown record magic 0x{first:08X} (not a plausible v0 ndim)", cur.pos - 4)
        shape = _shape(cur, first, "u32", ())
    return None if shape is None else _dense(cur, shape)


def read_legacy(data: bytes | bytearray | memoryview, source: str = "<bytes>") -> ArrayDict | ArrayList:
    """Parse a legacy NDArray-list file: a dict if it has names, a list otherwise.

    Raises :class:`ParamsFormatError` (naming ``source``, the record/name index
    and byte offset) for anything malformed.
    """
    buf = memoryview(data)
    if buf.ndim != 1 or buf.itemsize != 1:
        buf = buf.cast("B")
    cur = _Cursor(buf, source)
    if len(buf) < 24:
        raise cur.fail(f"truncated: file has {len(buf)} bytes, the header needs 24")
    magic = cur.u64("list magic")
    if magic != LIST_MAGIC:
        raise cur.fail(f"not an MXNet NDArray file (magic 0x{magic:X}, expected 0x112)", 0)
    reserved = cur.u64("reserved")
    if reserved != 0:
        raise cur.fail(f"reserved field is {reserved}, expected 0", 8)
    n = cur.u64("array count")
    if n and n > (cur.remaining - 8) // _MIN_RECORD:
        raise cur.fail(f"array count {n} impossible for {len(buf)} bytes", 16)
    arrays: list[Any] = []
    for i in range(n):
        cur.where = f"record {i}"
        arrays.append(_record(cur, i))
    cur.where = "name table"
    k = cur.u64("name count")
    if k not in (0, n):
        raise cur.fail(f"name count {k} must be 0 or equal the array count {n}", cur.pos - 8)
    names: list[str] = []
    for j in range(k):
        cur.where = f"name {j}"
        length = cur.u64("name length")
        raw = cur.take(length, "name")
        try:
            name = bytes(raw).decode("utf-8")
        except UnicodeDecodeError as e:
            raise cur.fail(f"name is not valid UTF-8 ({e.reason})", cur.pos - length) from None
        names.append(name)
    cur.where = "end of file"
    if cur.remaining:
        raise cur.fail(f"{cur.remaining} trailing bytes after the name table")
    if len(set(names)) != len(names):
        dup = next(x for x in names if names.count(x) > 1)
        raise ParamsFormatError(f"{source}: duplicate array name {dup!r}")
    for a in arrays:
        if isinstance(a, _Sparse):
            who = f"key {names[a.index]!r}" if names else f"array {a.index}"
            raise ParamsFormatError(
                f"{source}: record {a.index} ({who}) has sparse storage type "
                f"'{_STYPES[a.stype]}'; sparse storage is not supported")
    if n == 0:
        return {}
    return dict(zip(names, arrays)) if names else arrays


# ---------------------------------------------------------------------------- writer

def _as_numpy(value: Any, what: str) -> np.ndarray:
    if hasattr(value, "asnumpy"):  # framework / MXNet-style NDArray
        value = value.asnumpy()
    arr = np.asarray(value)
    if arr.dtype.hasobject:
        raise ParamsFormatError(f"{what}: object arrays cannot be saved")
    return arr


def _pack_record(arr: np.ndarray, version: int, what: str) -> bytes:
    flag = storable_flag(arr, what)
    if version == 2 and arr.ndim == 0:
        raise ParamsFormatError(
            f"{what}: a 0-d array cannot be stored in a V2 record (ndim 0 means 'none'); "
            "use version=3 or the npz format")
    if version == 2 and flag in _NOT_IN_1X:
        warnings.warn(f"{what}: MXNet 1.x cannot load dtype {FLAG_TO_NAME[flag]} (flag {flag}: "
                      "'Unknown type enum'); use version=3 or npz for MXNet 2.x", stacklevel=3)
    dt = FLAG_TO_DTYPE[flag]
    data = np.ascontiguousarray(arr).astype(dt, copy=False) if flag != 12 else \
        np.ascontiguousarray(arr).view("<u2")  # keep bfloat16 bit patterns as they are
    head = struct.pack("<Iii", V3_MAGIC if version == 3 else V2_MAGIC, 0, arr.ndim)
    dims = struct.pack(f"<{arr.ndim}q", *arr.shape)
    tail = struct.pack("<iii", 1, 0, flag)  # ctx cpu(0), dtype flag
    return head + dims + tail + data.tobytes()


def write_legacy(arrays: Mapping[str, Any] | Sequence[Any], version: int = 2) -> bytes:
    """Serialise arrays as a legacy NDArray-list file (dense, ctx cpu(0)).

    ``version=2`` (V2 magic) is what MXNet 1.x reads by default (it cannot
    read flags 8-11, so those warn); ``version=3`` (numpy-shape semantics) is
    what 2.x ``nd.load``/``npx.load`` expect and is required for 0-d arrays.
    A mapping gets a name table, a sequence does not.
    """
    if version not in (2, 3):
        raise ValueError(f"version must be 2 or 3, not {version!r}")
    if isinstance(arrays, Mapping):
        items = list(arrays.items())
        for key, _ in items:
            if not isinstance(key, str):
                raise ParamsFormatError(f"array names must be str, got {type(key).__name__} {key!r}")
    elif isinstance(arrays, Sequence) and not isinstance(arrays, (str, bytes)):
        items = [(None, v) for v in arrays]
    else:
        raise TypeError(f"arrays must be a dict or a list, not {type(arrays).__name__}")
    parts = [struct.pack("<QQQ", LIST_MAGIC, 0, len(items))]
    for i, (key, value) in enumerate(items):
        what = f"array {key!r}" if key is not None else f"array {i}"
        parts.append(_pack_record(_as_numpy(value, what), version, what))
    named = isinstance(arrays, Mapping)
    parts.append(struct.pack("<Q", len(items) if named else 0))
    if named:
        for key, _ in items:
            raw = key.encode("utf-8")
            parts.append(struct.pack("<Q", len(raw)) + raw)
    return b"".join(parts)


__all__ = ["read_legacy", "write_legacy", "LIST_MAGIC", "V1_MAGIC", "V2_MAGIC", "V3_MAGIC"]
