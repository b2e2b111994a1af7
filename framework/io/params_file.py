"""The one entry point for parameter files: detect, load, save, split names.

Format detection follows MXNet's ``MXNDArrayLoad``: the first four bytes
decide between a ZIP (npz), a single ``.npy`` and the legacy NDArray list.
The file name extension is never consulted.
"""
from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any, Literal, Union

import numpy as np

from .atomic import write_atomic
from .errors import ParamsFormatError
from .params_legacy import read_legacy, write_legacy
from .params_npz import DEFAULT_MAX_BYTES, read_npy, read_npz, write_npz

# ZIP local header / empty-archive end record, plus the byte-swapped forms MXNet also accepts
_NPZ_HEADS = (b"PK\x03\x04", b"PK\x05\x06", b"\x04\x03KP", b"\x06\x05KP")
_NPY_HEAD = b"\x93NUM"
ARG_PREFIX, AUX_PREFIX = "arg:", "aux:"

Params = Union[dict[str, np.ndarray], list[np.ndarray]]
PathOrBytes = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview]


def detect_format(head: bytes) -> Literal["npz", "npy", "legacy"]:
    """Classify a parameter file by its first (at least 4) bytes."""
    head = bytes(head[:4])
    if head in _NPZ_HEADS:
        return "npz"
    if head == _NPY_HEAD:
        return "npy"
    return "legacy"


def load_params(path_or_bytes: PathOrBytes, *, max_bytes: int | None = None) -> Params:
    """Load a parameter file (legacy binary, npz or npy) from a path or from bytes.

    Returns ``{name: array}`` -- or a list for an unnamed legacy file, and a
    one-element list for a single ``.npy``.  Legacy "none" arrays load as
    ``None``.  ``max_bytes`` bounds the file size and the total uncompressed
    npz payload (default: file size unbounded, npz payload 4 GiB).  Malformed
    files raise :class:`ParamsFormatError`; a missing file raises ``OSError``.
    """
    if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
        data, source = path_or_bytes, "<bytes>"
    elif isinstance(path_or_bytes, (str, os.PathLike)):
        source = os.fspath(path_or_bytes)
        with open(source, "rb") as f:
            if max_bytes is not None:
                size = os.fstat(f.fileno()).st_size
                if size > max_bytes:
                    raise ParamsFormatError(f"{source}: file is {size} bytes, limit is {max_bytes}")
            data = f.read()
    else:
        raise TypeError(f"expected a path or bytes, not {type(path_or_bytes).__name__}")
    size = memoryview(data).nbytes
    if max_bytes is not None and size > max_bytes:
        raise ParamsFormatError(f"{source}: input is {size} bytes, limit is {max_bytes}")
    fmt = detect_format(bytes(memoryview(data)[:4]))
    if fmt == "npz":
        return read_npz(data, source, max_bytes=DEFAULT_MAX_BYTES if max_bytes is None else max_bytes)
    if fmt == "npy":
        return [read_npy(data, source)]
    return read_legacy(data, source)


def save_params(path: str | os.PathLike[str], arrays: Mapping[str, Any] | Sequence[Any],
                format: Literal["npz", "legacy"] = "npz", *, legacy_version: int = 2) -> None:
    """Write ``arrays`` to ``path`` atomically (temp file in the same directory + ``os.replace``).

    ``format='npz'`` is what MXNet 2.x writes; ``format='legacy'`` writes the
    NDArray-list binary with V2 records (MXNet 1.x) or, with
    ``legacy_version=3``, V3 records (needed for 0-d arrays).
    """
    if format == "npz":
        payload = write_npz(arrays)  # type: ignore[arg-type]
    elif format == "legacy":
        payload = write_legacy(arrays, version=legacy_version)
    else:
        raise ValueError(f"format must be 'npz' or 'legacy', not {format!r}")
    write_atomic(path, payload)


def _need_dict(d: Any, what: str) -> Mapping[str, Any]:
    if not isinstance(d, Mapping):
        raise ParamsFormatError(f"{what} needs named arrays (a dict), got {type(d).__name__}")
    return d


def split_arg_aux(d: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Split an export-style dict into ``(arg_params, aux_params)`` with prefixes removed.

    ``arg:x`` goes to ``arg`` as ``x`` and ``aux:y`` to ``aux`` as ``y``; keys
    without a prefix (``save_parameters`` files) count as arguments.  Two keys
    that collide after stripping raise :class:`ParamsFormatError`.
    """
    arg: dict[str, Any] = {}
    aux: dict[str, Any] = {}
    for key, value in _need_dict(d, "split_arg_aux").items():
        if key.startswith(AUX_PREFIX):
            target, name = aux, key[len(AUX_PREFIX):]
        else:
            target, name = arg, key[len(ARG_PREFIX):] if key.startswith(ARG_PREFIX) else key
        if name in target:
            raise ParamsFormatError(f"parameter {name!r} appears twice (key {key!r})")
        target[name] = value
    return arg, aux


def strip_prefixes(d: Mapping[str, Any]) -> dict[str, Any]:
    """Drop a leading ``arg:``/``aux:`` from every key (what Gluon 2.x load_parameters does).

    Raises :class:`ParamsFormatError` if two keys map to the same name.
    """
    out: dict[str, Any] = {}
    for key, value in _need_dict(d, "strip_prefixes").items():
        name = key[4:] if key.startswith((ARG_PREFIX, AUX_PREFIX)) else key
        if name in out:
            raise ParamsFormatError(f"parameter {name!r} appears twice after removing "
                                    f"arg:/aux: prefixes (key {key!r})")
        out[name] = value
    return out


__all__ = ["detect_format", "load_params", "save_params", "split_arg_aux", "strip_prefixes"]
