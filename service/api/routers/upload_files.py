"""What an uploaded file looks like, so a wrong or swapped upload is named by the user's own
file name and its apparent kind, before anything is parsed."""
from __future__ import annotations

import struct

from starlette.datastructures import UploadFile

from framework.io.params_file import detect_format

from ...errors import BadRequest

FIELDS = ("symbol", "params", "config", "version", "archive")
_LEGACY_MAGICS = (0x112, 0xF993FAC8, 0xF993FAC9, 0xF993FACA)
_KINDS = {"json": "a JSON document", "npz": "an MXNet 2.x params file (npz)",
          "npy": "a NumPy .npy array", "legacy": "an MXNet 1.x params file (NDArray list)",
          "empty": "an empty file"}


def file_kind(head: bytes) -> str:
    """json, npz, npy, legacy, empty or unknown — from the first bytes."""
    if not head:
        return "empty"
    if head.lstrip()[:1] in (b"{", b"["):
        return "json"
    fmt = detect_format(head) if len(head) >= 4 else "unknown"
    if fmt in ("npz", "npy"):
        return fmt
    if len(head) >= 4 and struct.unpack_from("<I", head)[0] in _LEGACY_MAGICS:
        return "legacy"
    return "unknown"


def describe(kind: str, head: bytes) -> str:
    return _KINDS.get(kind) or f"unrecognised data (starts with {head[:8]!r})"


async def check_upload(field: str, upload) -> None:
    """`symbol` must look like JSON and `params` like a params file; anything else is a 400
    naming the uploaded file and what it looks like."""
    if not isinstance(upload, UploadFile):
        return
    head = await upload.read(16)
    await upload.seek(0)
    kind = file_kind(head)
    ok = kind == "json" if field == "symbol" else kind in ("npz", "npy", "legacy")
    if ok:
        return
    want = "a *-symbol.json graph (JSON)" if field == "symbol" else "an MXNet .params file"
    swapped = (field == "symbol" and kind in ("npz", "npy", "legacy")) or (
        field == "params" and kind == "json")
    raise BadRequest(f"field '{field}' got '{upload.filename}', which looks like "
                     f"{describe(kind, head)}, not {want}"
                     + ("; are 'symbol' and 'params' swapped?" if swapped else ""))
