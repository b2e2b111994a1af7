"""Limits on hostile documents and models that the parsers alone do not bound.

- JSON nesting depth: `json_depth` scans raw bytes (strings stripped, brackets counted in
  NumPy) so a file can be refused before any parser recurses into it; `check_tree_depth`
  walks an already-parsed document (the infer hot path, where `data` arrays are left to
  NumPy, which refuses more than 64 dimensions by itself).
- Model sizes before warm-up: `check_inputs` and `check_activations` (on the shapes the graph
  facts infer at the largest warm-up batch) refuse a graph whose single tensor or whose
  activations in total would be too large: a tiny upload can declare an enormous input shape
  or an op with a huge constant shape.
"""
from __future__ import annotations

import math
import re
from typing import Any

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


def check_tree_depth(obj: Any, limit: int, what: str, skip: frozenset[str] = frozenset()
                     ) -> None:
    """Depth of a parsed JSON value (dicts/lists), not descending into keys in `skip`.
    (On the infer hot path: a few microseconds for a typical request.)"""
    stack = [(obj, 1)]
    pop, push = stack.pop, stack.append
    while stack:
        node, d = pop()
        if d > limit:
            raise BadRequest(f"{what} nests more than {limit} levels deep")
        if type(node) is dict:
            for k, v in node.items():
                if (type(v) is dict or type(v) is list) and k not in skip:
                    push((v, d + 1))
        elif type(node) is list:
            for v in node:
                if type(v) is dict or type(v) is list:
                    push((v, d + 1))


def check_inputs(known: dict[str, tuple[int, ...]], max_elements: int) -> None:
    """Refuse input shapes (the largest warm-up batch) too large to even infer from."""
    for name, shp in known.items():
        n = math.prod(int(d) for d in shp)
        if n > max_elements:
            raise BadRequest(f"cannot load model: input '{name}' of shape {list(shp)} has {n} "
                             f"elements, over the limit of {max_elements}"[:1000])


def check_activations(sym, shapes: dict, max_elements: int, max_bytes: int,
                      itemsize: int = 4) -> None:
    """Refuse a graph whose tensors at the largest warm-up batch (`shapes`: its tolerant shape
    inference there, the graph facts', after `check_inputs`) would be too large (BadRequest).
    A node whose shape cannot be inferred blanks only itself and what depends on it (a graph
    that fails shape inference somewhere must not hide a huge constant elsewhere)."""
    names = {id(n): n.name for n in sym.topo() if not n.is_var}     # op outputs only
    total = 0
    for (nid, _), shp in shapes.items():
        if shp is None or nid not in names:
            continue
        n = math.prod(int(d) for d in shp)
        if n > max_elements:
            raise BadRequest(f"cannot load model: node '{names.get(nid, '?')}' would hold a "
                             f"tensor of shape {list(shp)} ({n} elements) at warm-up, "
                             f"over the limit of {max_elements} elements"[:1000])
        total += n * itemsize
    if total > max_bytes:
        raise BadRequest(f"cannot load model: its tensors at warm-up need about "
                         f"{total} bytes, over the limit of {max_bytes} bytes")
