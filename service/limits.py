"""Limits on hostile documents and models that the parsers alone do not bound.

- JSON nesting depth: `json_depth` scans raw bytes (strings stripped, brackets counted in
  NumPy) so a file can be refused before any parser recurses into it; `check_tree_depth`
  walks an already-parsed document (the infer hot path, where `data` arrays are left to
  NumPy, which refuses more than 64 dimensions by itself).
- Model sizes before warm-up: `check_activations` runs shape inference at batch 1 and refuses
  a graph whose single tensor or whose activations in total would be too large — a tiny
  upload can declare an enormous input shape or an op with a huge constant shape.
"""
from __future__ import annotations

import math
import re
from typing import Any, Iterable

import numpy as np

from .errors import BadRequest

_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKET = bytes(c for c in range(256) if c not in b"[]{}")


def json_depth(raw: bytes | bytearray | memoryview) -> int:
    """Maximum nesting depth of a JSON text (0 for a scalar); tolerant of malformed input."""
    b = bytes(raw)
    if b'"' in b:
        b = _STRING.sub(b"", b)
    br = b.translate(None, _NOT_BRACKET)
    if not br:
        return 0
    a = np.frombuffer(br, np.uint8)
    steps = np.where((a == ord("[")) | (a == ord("{")), 1, -1).astype(np.int32)
    return int(np.cumsum(steps).max())


def check_json_depth(raw: bytes | bytearray | memoryview, limit: int, what: str) -> None:
    if limit and len(raw) > limit:     # shorter texts cannot nest deeper than the limit
        d = json_depth(raw)
        if d > limit:
            raise BadRequest(f"{what} nests {d} levels deep, over the limit of {limit}")


def check_tree_depth(obj: Any, limit: int, what: str, skip: Iterable[str] = ()) -> None:
    """Depth of a parsed JSON value (dicts/lists), not descending into keys in `skip`."""
    skip = set(skip)
    stack = [(obj, 1)]
    while stack:
        node, d = stack.pop()
        if d > limit:
            raise BadRequest(f"{what} nests more than {limit} levels deep")
        if isinstance(node, dict):
            stack.extend((v, d + 1) for k, v in node.items()
                         if k not in skip and isinstance(v, (dict, list)))
        elif isinstance(node, list):
            stack.extend((v, d + 1) for v in node if isinstance(v, (dict, list)))


def check_activations(sym, known: dict[str, tuple[int, ...]], max_elements: int,
                      max_bytes: int, itemsize: int = 4) -> None:
    """Refuse a graph whose tensors at these input shapes would be too large (BadRequest).
    Shapes that cannot be inferred are skipped: the warm-up then finds them."""
    from framework.symbol.infer import infer_shapes
    try:
        shapes = infer_shapes(sym, known)
    except Exception:  # noqa: BLE001 - not our job to report shape errors here
        return
    names = {id(n): n.name for n in sym.topo()}
    total = 0
    for (nid, _), shp in shapes.items():
        if shp is None:
            continue
        n = math.prod(int(d) for d in shp)
        if n > max_elements:
            raise BadRequest(f"cannot load model: node '{names.get(nid, '?')}' would hold a "
                             f"tensor of shape {list(shp)} ({n} elements) at batch size 1, "
                             f"over the limit of {max_elements} elements"[:1000])
        total += n * itemsize
    if total > max_bytes:
        raise BadRequest(f"cannot load model: its tensors at batch size 1 need about "
                         f"{total} bytes, over the limit of {max_bytes} bytes")
