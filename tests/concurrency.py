"""Run a test body in several threads at once and collect what they raise."""
from __future__ import annotations

import threading
from typing import Callable


def run_in_threads(body: Callable[[int], None], n: int, start_together: bool = True
                   ) -> list[BaseException]:
    """body(0) … body(n-1), each in its own thread (released together by a barrier); returns
    the exceptions they raised (empty when all passed)."""
    barrier = threading.Barrier(n)
    errors: list[BaseException] = []

    def work(k: int) -> None:
        try:
            if start_together:
                barrier.wait()
            body(k)
        except BaseException as e:  # noqa: BLE001 - handed to the test
            errors.append(e)
    threads = [threading.Thread(target=work, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors
