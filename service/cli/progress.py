"""A progress line on stderr for long offline work (loading large models, warming shapes).

On a terminal one line is rewritten in place (`\\r`); otherwise (logs, pipes, CI) each stage
is its own line. Nothing is printed with `quiet`.
"""
from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    def __init__(self, what: str, quiet: bool = False, stream: TextIO | None = None):
        self.what, self.quiet = what, quiet
        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.t0 = time.perf_counter()
        self._width = 0

    def __call__(self, stage: str) -> None:
        if self.quiet:
            return
        line = f"[hybridserve] {self.what}: {stage} ({time.perf_counter() - self.t0:.1f}s)"
        if self.tty:
            self.stream.write("\r" + line.ljust(self._width))
            self._width = len(line)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def done(self, stage: str = "ready") -> None:
        self(stage)
        if self.tty and not self.quiet:
            self.stream.write("\n")
            self.stream.flush()
