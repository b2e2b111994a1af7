"""Infer and inspect bodies into typed requests, without stalling the event loop.

A small body (the MLP's JSON request is 10 KB) is parsed on the event loop as before: a thread
hop would cost more than the parse. A compressed body is inflated in a thread (its inflated
size bounded by the body limit). A body of `PRESCAN_MIN_BYTES` or more is parsed in a thread,
and when its JSON part is that large it is first read for its headers (protocol/prescan.py)
and held against the model: a request that cannot fit is refused before any of its data is
converted — orjson holds the GIL while it parses, so a thread alone would not keep the server
answering (issue 26).
"""
from __future__ import annotations

import asyncio
import time

from ..core.server import Core
from ..protocol.codec import InferRequest, decompress, parse_request, split_body
from ..protocol.prescan import check_body
from ..settings import Settings

PRESCAN_MIN_BYTES = 256 << 10    # below: under ~15 ms of parsing even for the worst JSON


async def inflate(body: bytes, encoding: str | None, limit: int) -> bytes:
    """The body with its Content-Encoding undone (in a thread: a small body may inflate to
    `limit` bytes)."""
    if not encoding or encoding.strip().lower() == "identity":
        return body
    return await asyncio.get_running_loop().run_in_executor(None, decompress, body, encoding,
                                                            limit)


async def infer_request(core: Core, name: str, version: str | None, body: bytes,
                        header_length: str | None) -> InferRequest:
    """Parse an (inflated) infer or inspect body addressed to model `name`."""
    s = core.settings
    if len(body) < PRESCAN_MIN_BYTES:
        return _parse(None, body, header_length, s)
    runner = core.registry.get(name, version).runner
    return await asyncio.get_running_loop().run_in_executor(None, _parse, runner, body,
                                                            header_length, s)


def _parse(runner, body: bytes, header_length: str | None, s: Settings) -> InferRequest:
    t0 = time.perf_counter_ns()
    if runner is not None:
        head, _ = split_body(body, header_length)
        if len(head) >= PRESCAN_MIN_BYTES:
            check_body(runner, head if isinstance(head, bytes) else bytes(head),
                       s.max_json_header_bytes, s.max_tensor_elements, s.max_json_depth)
    req = parse_request(body, header_length, s.max_tensor_elements, s.max_json_depth)
    req.decode_ns = time.perf_counter_ns() - t0
    return req
