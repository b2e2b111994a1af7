"""Connection limits uvicorn lacks: a deadline for each request's header, a body that must keep
arriving, and a cap on open connections.

Without them a slow client holds a socket and its buffers for as long as it likes: 2 000
connections sending half a header plus 50 declaring a 60 MB body and stalling stayed open
indefinitely (issue 26). uvicorn closes idle keep-alive connections (`timeout_keep_alive`) but
never a connection that has sent part of a request. The protocol class uvicorn would pick
(httptools, else h11) gets a thin mixin here:

- header: the request line and headers must be complete `header_timeout_s` after the
  connection opens, or after the first byte of a later request on a kept-alive connection;
- body: once a request's header is in, `body_timeout_s` may pass between two reads of its body
  (not counted while the server itself has paused reading);
- a stalled connection gets `408 {"error": ...}` and is closed; the app reading its body sees
  the client go away;
- at `max_connections` open connections, a new one closes the connection that has waited
  longest without a request in progress (idle or sending its header), else it is refused
  (503): stalled connections cannot lock normal clients out.
Each timeout of 0 disables it. `uvicorn_options(settings)` is what `serve` and the tests pass
to uvicorn (a picklable factory: multi-worker runs hand it to each worker).
"""
from __future__ import annotations

import asyncio
import functools
from collections import Counter
from dataclasses import dataclass
from typing import Any

import orjson
from uvicorn.protocols.http.h11_impl import H11Protocol

try:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol as _Fast
except ImportError:                  # no httptools: uvicorn's "auto" picks h11 as well
    _Fast = H11Protocol

from ..settings import Settings

CLOSED: Counter = Counter()          # connections closed by a limit, by reason (this process)
_REASON = {408: b"Request Timeout", 503: b"Service Unavailable"}


@dataclass(frozen=True)
class ConnLimits:
    header_timeout_s: float
    body_timeout_s: float
    max_connections: int


class _Guard:
    """The mixin: one timer per connection (header or body deadline)."""

    def __init__(self, *args: Any, limits: ConnLimits, **kw: Any):
        super().__init__(*args, **kw)
        self._limits = limits
        self._timer: asyncio.TimerHandle | None = None
        self._kind: str | None = None          # "header" or "body" while a deadline runs
        # this server's connections without a request in progress, longest-waiting first
        # (a dict keeps insertion order: eviction is O(1), not a scan of every connection)
        state = self.server_state
        if not hasattr(state, "guard_idle"):
            state.guard_idle = {}
        self._idle: dict = state.guard_idle

    def connection_made(self, transport) -> None:
        super().connection_made(transport)
        self._idle[self] = None
        self._arm("header")
        if len(self.connections) > self._limits.max_connections > 0:
            self._make_room()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.transport.is_closing():
            return
        cycle = self.cycle
        if cycle is None or cycle.response_complete:     # a header still (or newly) on its way
            if self._kind != "header":
                self._arm("header")
            return
        self._idle.pop(self, None)
        if cycle.more_body:
            self._arm("body")                            # every read restarts the deadline
        elif self._kind is not None:
            self._disarm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self.cycle is None or self.cycle.response_complete:
            self._idle.pop(self, None)
            self._idle[self] = None               # the newest idle one
            self._disarm()                        # uvicorn's keep-alive timer runs from here

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        self._idle.pop(self, None)
        super().connection_lost(exc)

    # -- deadlines -----------------------------------------------------------------------------
    def _arm(self, kind: str) -> None:
        self._disarm()
        delay = self._limits.header_timeout_s if kind == "header" else self._limits.body_timeout_s
        if delay > 0:
            self._kind = kind
            self._timer = self.loop.call_later(delay, self._expire)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = self._kind = None

    def _expire(self) -> None:
        kind, self._timer, self._kind = self._kind, None, None
        if self.transport.is_closing():
            return
        if kind == "body" and self.flow.read_paused:     # we stopped reading, not the client
            self._arm("body")
            return
        limit = self._limits.header_timeout_s if kind == "header" else self._limits.body_timeout_s
        self.refuse(408, f"request {kind} not received within {limit:g} s "
                         f"({kind}_timeout_s)", kind)

    def _make_room(self) -> None:
        for oldest in self._idle:
            if oldest is not self and not oldest.transport.is_closing():
                del self._idle[oldest]
                oldest.transport.close()
                CLOSED["evicted"] += 1
                return
        self.refuse(503, f"the server holds {len(self.connections) - 1} connections, its limit "
                         f"(max_connections); retry later", "full")

    def refuse(self, status: int, message: str, reason: str) -> None:
        """Answer `status` (unless a response is under way) and close the connection."""
        CLOSED[reason] += 1
        cycle = self.cycle
        if cycle is None or cycle.response_complete or not cycle.response_started:
            body = orjson.dumps({"error": message})
            retry = b"retry-after: 1\r\n" if status == 503 else b""
            self.transport.write(b"HTTP/1.1 %d %s\r\ncontent-type: application/json\r\n"
                                 b"connection: close\r\n%scontent-length: %d\r\n\r\n%s"
                                 % (status, _REASON[status], retry, len(body), body))
        self.transport.close()


class GuardedProtocol(_Guard, _Fast):
    """uvicorn's default HTTP/1.1 protocol (httptools when installed) with the limits."""


class GuardedH11(_Guard, H11Protocol):
    """The same over h11 (`http="h11"` runs, and the tests of both)."""


def limits_of(settings: Settings) -> ConnLimits:
    return ConnLimits(settings.header_timeout_s, settings.body_timeout_s,
                      settings.max_connections)


def uvicorn_options(settings: Settings, protocol: type = GuardedProtocol) -> dict[str, Any]:
    """Keyword arguments for uvicorn.run / uvicorn.Config carrying the connection limits."""
    return {"http": functools.partial(protocol, limits=limits_of(settings)),
            "timeout_keep_alive": settings.keepalive_timeout_s}
