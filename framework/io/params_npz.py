"""MXNet 2.x ``.npz`` parameter files and single ``.npy`` arrays, without pickle.

An MXNet 2.x params file is a ZIP archive whose members are ``<key>.npy``
(keys may contain ``:`` and ``.``).  We parse the ZIP with :mod:`zipfile` and
every ``.npy`` header ourselves (``ast.literal_eval``; never ``allow_pickle``).

Reader policy (the input may be hostile):

* object / string / structured / complex dtypes are rejected (a pickled
  member has ``descr '|O'`` and is rejected before its payload is touched);
* big-endian members are byte-swapped to native order (numpy does the same;
  MXNet refuses them) -- loading them is harmless and convenient;
* ``fortran_order: True`` members are returned as C-order arrays (like MXNet);
* bfloat16 is read from ``'<b2'`` (MXNet 2.0 docs) or ``[('bfloat16', '<u2')]``
  and returned as :data:`~.dtypes.BFLOAT16`;
* zip-bomb guards: each member's declared uncompressed size and the running
  total must be <= ``max_bytes``; a deflated member may not claim more than
  deflate's maximal ratio; the npy header's shape must account for exactly the
  declared member size *before* any payload is read; members are inflated
  incrementally, never past the declared size, and a stream that would go on,
  or whose CRC differs, is an error;
* sparse folders (``key/data.npy, key/indices.npy, ...``) raise a clear error;
  other folder members load densely as ``folder/stem`` (what MXNet does);
  non-``.npy`` members are ignored (as MXNet does); duplicate keys are rejected.
"""
from __future__ import annotations

import ast
import io
import struct
import sys
import warnings
import zipfile
import zlib
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from .dtypes import BFLOAT16, FLAG_TO_DTYPE, MAX_NDIM, dtype_flag, storable_flag
from .errors import ParamsFormatError
from .params_legacy import _as_numpy

NPY_MAGIC = b"\x93NUMPY"
DEFAULT_MAX_BYTES = 4 << 30  # 4 GiB of uncompressed payload per file
MAX_HEADER_LEN = 100_000  # numpy itself stops at 10_000 by default
MXNET_MAX_HEADER_LEN = 118  # MXNet 2.x reads the u16 length through a signed char
_MAX_DEFLATE_RATIO = 1032  # deflate cannot expand more than ~1032:1
_DESCR = {0: "'<f4'", 1: "'<f8'", 2: "'<f2'", 3: "'|u1'", 4: "'<i4'", 5: "'|i1'", 6: "'<i8'",
          7: "'|b1'", 8: "'<i2'", 9: "'<u2'", 10: "'<u4'", 11: "'<u8'",
          12: "[('bfloat16', '<u2')]"}  # what MXNet master writes; numpy can load it too
_SPARSE_SETS = {
    frozenset({"data.npy", "indices.npy", "indptr.npy", "format.npy", "shape.npy"}): "csr",
    frozenset({"data.npy", "indices.npy", "format.npy", "shape.npy"}): "row_sparse",
    frozenset({"data.npy", "row.npy", "col.npy", "format.npy", "shape.npy"}): "coo",
    frozenset({"data.npy", "offsets.npy", "format.npy", "shape.npy"}): "dia",
}
# exceptions zipfile/zlib raise on corrupt archives; anything else is a bug worth seeing
_ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, OSError, EOFError,
               ValueError, struct.error, UnicodeDecodeError, NotImplementedError,
               RuntimeError, KeyError, IndexError, TypeError, OverflowError)

ArrayDict = dict[str, np.ndarray]


def _descr_dtype(descr: Any, fail: Callable[[str], ParamsFormatError]) -> np.dtype:
    """Map an npy ``descr`` to a supported (possibly big-endian) numpy dtype."""
    if descr == "<b2" or descr in ([("bfloat16", "<u2")], [("bfloat16", "|u2")]):
        return BFLOAT16
    if not isinstance(descr, str):
        raise fail(f"unsupported (structured) dtype descr {descr!r}")
    try:
        dt = np.dtype(descr)
    except Exception:  # np.dtype raises several types for garbage strings
        raise fail(f"invalid dtype descr {descr!r}") from None
    if dt.hasobject:
        raise fail(f"object dtype {descr!r} (pickled data) is not supported")
    if dt.names is not None or dt.subdtype is not None:
        raise fail(f"unsupported (structured) dtype descr {descr!r}")
    try:
        dtype_flag(dt)
    except ParamsFormatError:
        raise fail(f"dtype {descr!r} has no MXNet equivalent") from None
    return dt


def _parse_header(text: str, fail: Callable[[str], ParamsFormatError]) -> tuple[np.dtype, tuple[int, ...], bool]:
    try:
        hdr = ast.literal_eval(text)
    except Exception as e:  # SyntaxError, ValueError, MemoryError on nesting, RecursionError...
        raise fail(f"npy header is not a Python literal ({type(e).__name__}: "
                   f"{str(e)[:80]}; header {text[:60]!r})") from None
    if not isinstance(hdr, dict) or set(hdr) != {"descr", "fortran_order", "shape"}:
        raise fail(f"npy header must have exactly descr/fortran_order/shape, got {str(hdr)[:80]!r}")
    shape, fortran = hdr["shape"], hdr["fortran_order"]
    if not isinstance(fortran, bool):
        raise fail(f"fortran_order must be a bool, got {fortran!r}")
    if not isinstance(shape, tuple) or not all(type(d) is int and d >= 0 for d in shape):
        raise fail(f"shape must be a tuple of non-negative ints, got {str(shape)[:80]}")
    if len(shape) > MAX_NDIM:
        raise fail(f"ndim {len(shape)} exceeds {MAX_NDIM}")
    return _descr_dtype(hdr["descr"], fail), shape, fortran


def _read_npy(read: Callable[[int], bytes], total: int, fail: Callable[[str], ParamsFormatError]) -> np.ndarray:
    """Parse one npy stream of exactly ``total`` bytes; ``read(n)`` returns at most n bytes."""
    pre = read(10)
    if len(pre) < 10 or pre[:6] != NPY_MAGIC:
        raise fail("not an npy array (bad magic or truncated preamble)")
    major, minor = pre[6], pre[7]
    if major not in (1, 2, 3) or minor != 0:
        raise fail(f"unsupported npy version {major}.{minor}")
    if major == 1:
        hlen, start = struct.unpack_from("<H", pre, 8)[0], 10
    else:
        extra = read(2)
        if len(extra) < 2:
            raise fail("truncated npy preamble")
        hlen, start = struct.unpack("<I", pre[8:] + extra)[0], 12
    if hlen > MAX_HEADER_LEN or start + hlen > total:
        raise fail(f"npy header length {hlen} is invalid for a {total}-byte member")
    raw_header = read(hlen)
    if len(raw_header) != hlen:
        raise fail("truncated npy header")
    try:
        text = raw_header.decode("utf-8" if major == 3 else "latin1")
    except UnicodeDecodeError:
        raise fail("npy header is not valid UTF-8") from None
    dt, shape, fortran = _parse_header(text, fail)
    count, nominal = 1, dt.itemsize
    for d in shape:
        count *= d
        nominal *= max(d, 1)
    nbytes = count * dt.itemsize
    if nominal > sys.maxsize or start + hlen + nbytes != total:
        raise fail(f"shape {shape} of {dt} needs {nbytes} data bytes, "
                   f"but the member holds {total - start - hlen}")
    payload = read(nbytes)
    if len(payload) != nbytes:
        raise fail(f"truncated data: expected {nbytes} bytes, got {len(payload)}")
    if dt.kind == "b":  # normalise non-0/1 bytes to proper bools
        flat = np.frombuffer(payload, np.uint8) != 0
    else:
        flat = np.frombuffer(payload, dt)
    arr = flat.reshape(shape[::-1]).T if fortran else flat.reshape(shape)
    native = dt if dt.kind == "b" or dt.names is not None else dt.newbyteorder("=")
    return arr.astype(native, order="C")  # owned, C-order, native byte order


class _MemberStream:
    """Reads one member's bytes straight from the archive buffer, inflating on demand.

    zipfile's own reader silently stops at the declared size; we also want to
    *notice* a deflate stream that would go on (a bomb with a lying size) and
    check the CRC ourselves, so the member is read here with public zlib APIs.
    """

    _CHUNK = 1 << 16

    def __init__(self, data: Any, info: zipfile.ZipInfo, fail: Callable[[str], ParamsFormatError]) -> None:
        buf = memoryview(data).cast("B")
        local = bytes(buf[info.header_offset:info.header_offset + 30])
        if len(local) != 30 or local[:4] != b"PK\x03\x04":
            raise fail("bad local file header")
        name_len, extra_len = struct.unpack_from("<HH", local, 26)
        start = info.header_offset + 30 + name_len + extra_len
        if start + info.compress_size > len(buf):
            raise fail(f"member data runs past the end of the file ({start}+{info.compress_size})")
        self.raw = buf[start:start + info.compress_size]
        self.pos, self.left, self.crc = 0, info.file_size, 0
        self.expected_crc, self.fail = info.CRC, fail
        self.inflater = zlib.decompressobj(-15) if info.compress_type == zipfile.ZIP_DEFLATED else None

    def _inflate(self, n: int) -> bytes:
        parts: list[bytes] = []
        assert self.inflater is not None
        while n > 0 and not self.inflater.eof:
            if self.inflater.unconsumed_tail:
                src = self.inflater.unconsumed_tail
            elif self.pos < len(self.raw):
                src = bytes(self.raw[self.pos:self.pos + self._CHUNK])
                self.pos += len(src)
            else:
                break
            got = self.inflater.decompress(src, n)
            parts.append(got)
            n -= len(got)
        return b"".join(parts)

    def read(self, n: int) -> bytes:
        n = min(n, self.left)
        if self.inflater is None:
            out = bytes(self.raw[self.pos:self.pos + n])
            self.pos += len(out)
        else:
            out = self._inflate(n)
        self.left -= len(out)
        self.crc = zlib.crc32(out, self.crc)
        return out

    def finish(self) -> None:
        """The member must end exactly at its declared size and match its CRC."""
        if self.left:
            raise self.fail(f"member is {self.left} bytes shorter than declared")
        if self.inflater is not None:
            if self._inflate(1):  # anything left to inflate means the declared size lies
                raise self.fail("deflate stream inflates beyond the declared size")
            if not self.inflater.eof:
                raise self.fail("deflate stream is truncated")
        elif self.pos != len(self.raw):
            raise self.fail("stored member is longer than declared")
        if self.crc != self.expected_crc:
            raise self.fail(f"Bad CRC-32 (0x{self.crc:08x}, expected 0x{self.expected_crc:08x})")


def read_npy(data: bytes | bytearray | memoryview, source: str = "<bytes>") -> np.ndarray:
    """Parse a single ``.npy`` file held in memory (no pickle)."""
    stream = io.BytesIO(data)

    def fail(what: str) -> ParamsFormatError:
        return ParamsFormatError(f"{source}: {what}")
    return _read_npy(stream.read, len(stream.getbuffer()), fail)


def _key_of(name: str, folders: dict[str, set[str]], source: str) -> str:
    """Array key for member ``name``; raises for MXNet's sparse folder layouts."""
    folder = name.rpartition("/")[0]
    if folder:
        kind = _SPARSE_SETS.get(frozenset(folders[folder]))
        if kind is not None:
            raise ParamsFormatError(
                f"{source}: key {folder!r} is stored as a sparse array (stype '{kind}', "
                f"members {sorted(folders[folder])}); sparse storage is not supported")
    return name[:-4]


def read_npz(data: bytes | bytearray | memoryview, source: str = "<bytes>",
             *, max_bytes: int = DEFAULT_MAX_BYTES) -> ArrayDict:
    """Parse an MXNet 2.x / numpy ``.npz`` archive into ``{key: array}`` in member order."""
    def fail_at(member: str) -> Callable[[str], ParamsFormatError]:
        return lambda what: ParamsFormatError(f"{source}: member {member!r}: {what}")
    size = len(memoryview(data).cast("B"))
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
        infos = zf.infolist()
    except _ZIP_ERRORS as e:
        raise ParamsFormatError(f"{source}: not a readable ZIP archive ({e})") from None
    members = [i for i in infos if i.filename.endswith(".npy")]
    folders: dict[str, set[str]] = {}
    for info in members:
        folder, _, base = info.filename.rpartition("/")
        if folder:
            folders.setdefault(folder, set()).add(base)
    out: ArrayDict = {}
    total = 0
    for info in members:
        name = info.filename
        fail = fail_at(name)
        key = _key_of(name, folders, source)
        if key in out:
            raise fail(f"duplicate key {key!r}")
        if info.flag_bits & 0x1:
            raise fail("encrypted members are not supported")
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise fail(f"unsupported compression method {info.compress_type}")
        total += info.file_size
        if info.file_size > max_bytes or total > max_bytes:
            raise fail(f"declared uncompressed size {info.file_size} (running total {total}) "
                       f"exceeds the limit of {max_bytes} bytes")
        if info.compress_size > size:
            raise fail(f"compressed size {info.compress_size} exceeds the file size {size}")
        if info.compress_type == zipfile.ZIP_STORED and info.compress_size != info.file_size:
            raise fail(f"stored member has compressed size {info.compress_size} != size {info.file_size}")
        if info.file_size > info.compress_size * _MAX_DEFLATE_RATIO + 1024:
            raise fail(f"impossible compression ratio ({info.file_size} from {info.compress_size} bytes)")
        try:
            stream = _MemberStream(data, info, fail)
            out[key] = _read_npy(stream.read, info.file_size, fail)
            stream.finish()
        except ParamsFormatError:
            raise
        except _ZIP_ERRORS as e:
            raise fail(f"corrupt member ({type(e).__name__}: {e})") from None
    return out


# ---------------------------------------------------------------------------- writer

def npy_bytes(value: Any, what: str = "array") -> bytes:
    """One array as npy v1.0 bytes, formatted like MXNet/numpy (header padded to 64)."""
    arr = _as_numpy(value, what)
    flag = storable_flag(arr, what)
    shape = tuple(int(d) for d in arr.shape)
    text = f"{{'descr': {_DESCR[flag]}, 'fortran_order': False, 'shape': {shape!r}, }}"
    pad = -(10 + len(text) + 1) % 64
    header = (text + " " * pad + "\n").encode("latin1")
    if len(header) > MXNET_MAX_HEADER_LEN:
        warnings.warn(f"{what}: npy header of {len(header)} bytes (shape {shape}) cannot be read "
                      f"by MXNet 2.x (needs <= {MXNET_MAX_HEADER_LEN}); numpy can read it",
                      stacklevel=3)
    if len(header) > 0xFFFF:  # cannot happen with ndim <= 32, but never write a wrong length
        raise ParamsFormatError(f"{what}: npy header too long")
    if flag == 12:  # keep bfloat16 bit patterns untouched
        data = np.ascontiguousarray(arr).view("<u2")
    else:
        data = np.ascontiguousarray(arr).astype(FLAG_TO_DTYPE[flag], copy=False)
    return NPY_MAGIC + b"\x01\x00" + struct.pack("<H", len(header)) + header + data.tobytes()


def write_npz(arrays: Mapping[str, Any]) -> bytes:
    """Serialise ``{key: array}`` as an uncompressed npz with ``key + '.npy'`` members, in order."""
    if not isinstance(arrays, Mapping):
        raise TypeError(f"arrays must be a dict, not {type(arrays).__name__}")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
        for key, value in arrays.items():
            if not isinstance(key, str):
                raise ParamsFormatError(f"array names must be str, got {type(key).__name__} {key!r}")
            info = zipfile.ZipInfo(key + ".npy", date_time=(1980, 1, 1, 0, 0, 0))  # reproducible
            info.compress_type = zipfile.ZIP_STORED
            info.external_attr = 0o644 << 16
            zf.writestr(info, npy_bytes(value, f"array {key!r}"))
    return buf.getvalue()


__all__ = ["read_npz", "write_npz", "read_npy", "npy_bytes", "DEFAULT_MAX_BYTES", "NPY_MAGIC"]
