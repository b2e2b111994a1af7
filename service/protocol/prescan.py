"""A large JSON infer body read for its headers only, before anything is converted.

orjson holds the GIL for the whole parse (52 MiB of 800 000 one-element inputs: 2.8 s) and the
parsed document can weigh ten times the body, so a server that parses first and checks after
stalls every endpoint for one hostile request. Here each input's `data` array is located by
byte searches (C speed, no copy) and its elements counted without being converted: the commas
of a nested list of scalars number one less than its leaves. The rest of the document (names,
shapes, datatypes, parameters) must be small — `max_header` bytes — and is parsed with the
arrays replaced by placeholders. `check_body` then holds the headers against the model (input
count and names, datatypes, shapes, batch size, element counts) through the runner's own
`validate`, with zero-byte stand-in arrays, so the rules and messages are those of a parsed
request.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import BadRequest
from .codec import InferInput, input_header, load_json, request_inputs
from .tensors import wrong_count

_KEY = b'"data"'
_WS = re.compile(rb"[ \t\r\n]*")
_SEP = re.compile(rb"[ \t\r\n]*(?:,[ \t\r\n]*)?")       # what may follow an object member
_EMPTY = re.compile(rb"[\[\] \t\r\n]*")                 # an array without a single element
_TOKEN = re.compile(rb'[\[\]{},]|"(?:[^"\\]|\\.)*"')    # structure outside strings
_MARK = "\x00"                                          # placeholder strings: NUL + span index
_STANDIN = np.zeros((), np.uint8)
_WINDOW = 4 << 20


@dataclass(slots=True)
class InputHead:
    name: str
    datatype: str
    shape: tuple[int, ...]
    elements: int | None        # counted in its `data` array (None: binary, or a bare scalar)


def _end_of(buf: bytes, start: int) -> int:
    """First of `"`, `{`, `}` at or after `start` (len(buf) when none)."""
    ends = [i for i in (buf.find(b'"', start), buf.find(b"{", start), buf.find(b"}", start))
            if i >= 0]
    return min(ends) if ends else len(buf)


def _counts(buf: bytes, start: int, end: int) -> tuple[int, int, int]:
    """How many `[`, `]` and `,` are in `buf[start:end]`: NumPy over 4 MiB windows beyond a
    small range (it lets go of the GIL; bytes.count does not, and is slower)."""
    if end - start < _WINDOW:
        return buf.count(b"[", start, end), buf.count(b"]", start, end), buf.count(b",", start, end)
    view, out = memoryview(buf), [0, 0, 0]
    for w in range(start, end, _WINDOW):
        a = np.frombuffer(view[w:min(w + _WINDOW, end)], np.uint8)
        for k, c in enumerate(b"[],"):
            out[k] += int(np.count_nonzero(a == c))
    return out[0], out[1], out[2]


def _array(buf: bytes, v: int) -> tuple[int, int]:
    """(end, element count) of the array opening at `buf[v]`."""
    stop = _end_of(buf, v)
    close = buf.rfind(b"]", v, stop)
    if close > v and _SEP.fullmatch(buf, close + 1, stop):
        opens, closes, commas = _counts(buf, v, close + 1)
        if opens == closes:
            # no string inside: numbers, booleans (or junk the full parse refuses) in lists
            return close + 1, 0 if _EMPTY.fullmatch(buf, v, close + 1) else commas + 1
    return _walk(buf, v)


def _walk(buf: bytes, v: int) -> tuple[int, int]:
    """An array holding strings: token by token (strings are skipped whole by the regex)."""
    depth = commas = 0
    for m in _TOKEN.finditer(buf, v):
        t = buf[m.start()]
        if t == 0x5B:                       # [
            depth += 1
        elif t == 0x5D:                     # ]
            depth -= 1
            if depth == 0:
                n = 0 if _EMPTY.fullmatch(buf, v, m.end()) else commas + 1
                return m.end(), n
        elif t == 0x2C:                     # ,
            commas += 1
        elif t != 0x22:                     # { or }: not tensor data
            raise BadRequest("an input's 'data' must hold numbers, booleans or strings in "
                             "(nested) lists")
    raise BadRequest("malformed JSON in request: an input's 'data' array is not closed")


def _spans(buf: bytes, max_spans: int) -> list[tuple[int, int, int]]:
    """(start, end, elements) of the `"data": [...]` arrays, in order; at most `max_spans`
    (the rest of the body then counts as header, and is refused as too large)."""
    spans: list[tuple[int, int, int]] = []
    i, looked = 0, 0
    while len(spans) < max_spans and looked < 4 * max_spans:
        k = buf.find(_KEY, i)
        if k < 0:
            break
        looked += 1
        i = k + len(_KEY)
        j = _WS.match(buf, i).end()
        if j >= len(buf) or buf[j] != 0x3A:            # not a key: e.g. "name": "data"
            continue
        v = _WS.match(buf, j + 1).end()
        if v >= len(buf) or buf[v] != 0x5B:            # a scalar: small, left in the header
            continue
        end, n = _array(buf, v)
        spans.append((v, end, n))
        i = end
    return spans


def scan(body: bytes, max_header: int, max_spans: int, max_elements: int, max_depth: int,
         expect: str = "") -> list[InputHead]:
    """The inputs' headers of a JSON infer body, without converting their data. `expect`
    (e.g. what the model takes) ends the message of a body refused for its header size."""
    spans = _spans(body, max_spans)
    outside = len(body) - sum(e - s for s, e, _ in spans)
    if outside > max_header:
        raise BadRequest(f"request JSON outside the inputs' 'data' arrays is {outside} bytes, "
                         f"over the limit of {max_header} bytes{expect}")
    pieces, pos = [], 0
    for k, (s, e, _) in enumerate(spans):
        pieces += [body[pos:s], b'"\\u0000%d"' % k]
        pos = e
    pieces.append(body[pos:])
    doc = load_json(b"".join(pieces))
    heads, seen = [], set()
    for k, ri in enumerate(request_inputs(doc, max_depth)):
        name, datatype, shape, _ = input_header(k, ri, seen, max_elements)
        heads.append(InputHead(name, datatype, shape, _counted(ri.get("data"), spans)))
    return heads


def _counted(data: Any, spans: list[tuple[int, int, int]]) -> int | None:
    if isinstance(data, str) and data.startswith(_MARK) and data[1:].isdigit():
        k = int(data[1:])
        return spans[k][2] if k < len(spans) else None
    return None


def check_body(runner, body: bytes, max_header: int, max_elements: int, max_depth: int
               ) -> None:
    """Refuse (BadRequest) a JSON infer body that cannot fit `runner`'s inputs, from its
    headers alone: too many inputs, unknown or missing names, datatypes, shapes, the batch
    size, element counts."""
    names = [s.name for s in runner.inputs]
    expect = f" (model '{runner.name}' takes {len(names)} input(s): {names})"
    heads = scan(body, max_header, len(names) + 16, max_elements, max_depth, expect)
    for h in heads:
        if h.elements is not None and h.elements != math.prod(h.shape):
            raise wrong_count(h.name, h.shape, h.elements)
    if runner.transforms.images:        # encoded images become the declared tensors later
        for h in heads:
            if h.name not in runner.input_index:
                raise BadRequest(f"unexpected inference input '{h.name}' for model "
                                 f"'{runner.name}'; expected {names}")
        return
    runner.validate([InferInput(h.name, h.datatype, h.shape, np.broadcast_to(_STANDIN, h.shape))
                     for h in heads])
