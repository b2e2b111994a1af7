"""Graceful shutdown in two steps: on SIGTERM/SIGINT the server first turns readiness off
(`GET /v2/health/ready` answers 503) while it still accepts and serves everything, for
`drain_s` seconds, so that load balancers with active health checks (Kubernetes endpoints,
an external balancer) stop sending new work; then uvicorn's own graceful shutdown: it stops
accepting, closes idle keep-alive connections, lets in-flight requests finish (up to
graceful_timeout_s) and runs the application's shutdown. A second signal skips the wait."""
from __future__ import annotations

import threading

import uvicorn


class DrainingServer(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, app_state, drain_s: float):
        super().__init__(config)
        self._state, self._drain_s = app_state, drain_s
        self._timer: threading.Timer | None = None

    def handle_exit(self, sig, frame) -> None:
        self._state.draining = True              # readiness off first, whatever comes next
        if self._drain_s <= 0 or self._timer is not None:
            super().handle_exit(sig, frame)
            return
        self._timer = threading.Timer(self._drain_s, super().handle_exit, (sig, frame))
        self._timer.daemon = True
        self._timer.start()


def run(app, drain_s: float, **config) -> None:
    """uvicorn.run(app, **config) for one process, with the two-step shutdown above."""
    DrainingServer(uvicorn.Config(app, **config), app.state, drain_s).run()
