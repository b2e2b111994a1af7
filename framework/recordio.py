"""`mx.recordio`: MXNet's RecordIO files (`.rec`, with a `.idx` text index) and image records.

Format (dmlc-core's): each record is a 4-byte magic 0xced7230a, a uint32 whose top 3 bits are a
continuation flag and low 29 bits a length, the bytes, and zero padding to 4 bytes. A payload
holding the magic word at a 4-byte boundary is split there into parts (flags 1 start, 2 middle,
3 end; the reader puts the magic back between them). An image record's payload is an IRHeader
(`IfQQ`: flag, label, id, id2; flag > 0 means `flag` float32 labels follow) and the encoded
image. Encoding and decoding images use Pillow.
"""
from __future__ import annotations

import io
import numbers
import os
import struct
from collections import namedtuple

import numpy as _onp
from PIL import Image as _PILImage

__all__ = ["MXRecordIO", "MXIndexedRecordIO", "IRHeader", "pack", "unpack", "pack_img",
           "unpack_img"]

_MAGIC = 0xCED7230A
_MAGIC_BYTES = struct.pack("<I", _MAGIC)
_LEN_MASK = (1 << 29) - 1


class MXRecordIO:
    """Sequential reader (`flag='r'`) or writer (`'w'`) of a RecordIO file."""

    def __init__(self, uri: str, flag: str):
        if flag not in ("r", "w"):
            raise ValueError(f"Invalid flag {flag}")
        self.uri, self.flag = os.fspath(uri), flag
        self.writable = flag == "w"
        self.is_open = False
        self.open()

    def open(self) -> None:
        self._f = open(self.uri, "wb" if self.writable else "rb")
        self.is_open = True

    def close(self) -> None:
        if self.is_open:
            self._f.close()
            self.is_open = False

    def __del__(self):
        self.close()

    def reset(self) -> None:
        self.close()
        self.open()

    def write(self, buf: bytes) -> None:
        assert self.writable
        buf = bytes(buf)
        parts, start = [], 0
        for i in range(0, len(buf) - len(buf) % 4, 4):
            if buf[i:i + 4] == _MAGIC_BYTES:
                parts.append(buf[start:i])
                start = i + 4
        parts.append(buf[start:])
        for k, part in enumerate(parts):
            cflag = 0 if len(parts) == 1 else 1 if k == 0 else 3 if k == len(parts) - 1 else 2
            self._f.write(_MAGIC_BYTES + struct.pack("<I", (cflag << 29) | len(part)) + part)
        self._f.write(b"\0" * (-len(buf) % 4))

    def tell(self) -> int:
        return self._f.tell()

    def _part(self):
        head = self._f.read(8)
        if len(head) < 8:
            return None, None
        magic, lrec = struct.unpack("<II", head)
        if magic != _MAGIC:
            raise ValueError(f"{self.uri}: not a RecordIO record at byte {self._f.tell() - 8}")
        n = lrec & _LEN_MASK
        data = self._f.read(n)
        self._f.read(-n % 4)
        return lrec >> 29, data

    def read(self) -> bytes | None:
        """The next record, or None at the end of the file."""
        assert not self.writable
        cflag, data = self._part()
        if cflag is None or cflag == 0:
            return data
        parts = [data]
        while cflag != 3:
            cflag, data = self._part()
            if cflag is None:
                raise ValueError(f"{self.uri}: truncated multi-part record")
            parts.append(data)
        return _MAGIC_BYTES.join(parts)


class MXIndexedRecordIO(MXRecordIO):
    """RecordIO with random access through an index file of `key<TAB>offset` lines."""

    def __init__(self, idx_path: str, uri: str, flag: str, key_type=int):
        self.idx_path, self.key_type = os.fspath(idx_path), key_type
        self.idx: dict = {}
        self.keys: list = []
        super().__init__(uri, flag)

    def open(self) -> None:
        super().open()
        self.idx, self.keys = {}, []
        self._fidx = open(self.idx_path, "w" if self.writable else "r")
        if not self.writable:
            for line in self._fidx:
                key, pos = line.strip().split("\t")
                self.idx[self.key_type(key)] = int(pos)
                self.keys.append(self.key_type(key))

    def close(self) -> None:
        if self.is_open:
            self._fidx.close()
        super().close()

    def seek(self, idx) -> None:
        assert not self.writable
        self._f.seek(self.idx[idx])

    def read_idx(self, idx) -> bytes:
        self.seek(idx)
        return self.read()

    def write_idx(self, idx, buf: bytes) -> None:
        key = self.key_type(idx)
        pos = self.tell()
        self.write(buf)
        self._fidx.write(f"{key}\t{pos}\n")
        self.idx[key] = pos
        self.keys.append(key)


IRHeader = namedtuple("HEADER", ["flag", "label", "id", "id2"])
_IR_FORMAT = "IfQQ"
_IR_SIZE = struct.calcsize(_IR_FORMAT)


def pack(header: IRHeader, s: bytes) -> bytes:
    """An image-record payload: the header (a number label, or an array as `flag` floats)
    then `s`."""
    header = IRHeader(*header)
    if isinstance(header.label, numbers.Number):
        header = header._replace(flag=0)
        extra = b""
    else:
        label = _onp.asarray(header.label, dtype=_onp.float32)
        header = header._replace(flag=label.size, label=0)
        extra = label.tobytes()
    return struct.pack(_IR_FORMAT, *header) + extra + bytes(s)


def unpack(s: bytes) -> tuple[IRHeader, bytes]:
    header = IRHeader(*struct.unpack(_IR_FORMAT, s[:_IR_SIZE]))
    s = s[_IR_SIZE:]
    if header.flag > 0:
        header = header._replace(label=_onp.frombuffer(s, _onp.float32, header.flag))
        s = s[header.flag * 4:]
    return header, s


def unpack_img(s: bytes, iscolor: int = -1):
    """(header, uint8 image) — 3 channels in BGR order as OpenCV gives, gray for iscolor 0."""
    header, img = unpack(s)
    pic = _PILImage.open(io.BytesIO(img))
    if iscolor == 0 or (iscolor == -1 and pic.mode == "L"):
        return header, _onp.asarray(pic.convert("L"))
    return header, _onp.ascontiguousarray(_onp.asarray(pic.convert("RGB"))[:, :, ::-1])


def pack_img(header: IRHeader, img, quality: int = 95, img_fmt: str = ".jpg") -> bytes:
    """Encode a uint8 image (BGR or gray, as OpenCV arrays) and pack it with `header`."""
    arr = _onp.asarray(img, dtype=_onp.uint8)
    pic = _PILImage.fromarray(arr[:, :, ::-1] if arr.ndim == 3 else arr)
    fmt = {".jpg": "JPEG", ".jpeg": "JPEG", ".png": "PNG"}.get(img_fmt.lower())
    if fmt is None:
        raise ValueError(f"pack_img: unsupported image format {img_fmt}")
    buf = io.BytesIO()
    pic.save(buf, fmt, **({"quality": quality} if fmt == "JPEG" else {}))
    return pack(header, buf.getvalue())
