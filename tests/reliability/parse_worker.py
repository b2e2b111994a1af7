"""The parsers under test, run in a separate single-threaded process (a `spawn` child): no
other thread can allocate inside its tracemalloc window, a parser that crashes or hangs cannot
take the test process with it, and an address-space limit makes "bounded memory" a hard
limit (an attempt past it is a MemoryError, reported as a failure)."""
from __future__ import annotations

import multiprocessing as mp
import resource
import time
import tracemalloc
import traceback

AS_LIMIT = 6 << 30                # address space of the child (imports take ~1-2 GiB of it)


def _serve(conn) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (AS_LIMIT, AS_LIMIT))
    from framework.base import MXNetError
    from framework.io import load_params
    from framework.ops.registry import all_ops
    from framework.symbol.json_io import load_json
    all_ops()                     # the op table fills itself on first use: not parse time
    parsers = {"symbol": lambda b: load_json(b, max_nodes=5000, max_bytes=1 << 20),
               "params": lambda b: load_params(b, max_bytes=4 << 20)}
    while True:
        msg = conn.recv()
        if msg is None:
            return
        kind, data = msg
        tracemalloc.start()
        t0 = time.perf_counter()
        try:
            parsers[kind](data)
            outcome, detail = "parsed", ""
        except MXNetError as e:
            outcome, detail = "refused", type(e).__name__
        except BaseException as e:  # noqa: BLE001 - exactly what the test looks for
            outcome, detail = "crash", "".join(traceback.format_exception(e))[-3000:]
        dt = time.perf_counter() - t0
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        conn.send((outcome, detail, dt, peak))


class ParseWorker:
    def __init__(self) -> None:
        ctx = mp.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_serve, args=(child,), daemon=True)
        self.proc.start()

    def parse(self, kind: str, data: bytes, timeout: float) -> tuple[str, str, float, int]:
        self.conn.send((kind, data))
        if not self.conn.poll(timeout):
            self.proc.kill()
            raise AssertionError(f"{kind} parse did not finish within {timeout}s")
        return self.conn.recv()

    def close(self) -> None:
        try:
            self.conn.send(None)
        except OSError:
            pass
        self.proc.join(10)
        if self.proc.is_alive():
            self.proc.kill()
