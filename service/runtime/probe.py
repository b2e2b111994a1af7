"""Trying a user's model to learn something about it — the one catch-all of the runtime.

A model is arbitrary: building its twins, lowering it, opening sessions, running its kernels on
check inputs or applying an op's estimate rule to its shapes may raise anything, and what they
raise is a fact about the model (serve the traced graph, keep the slower path, no estimate),
not an error of the server. `attempt` returns it instead of raising; each caller decides and
logs what it means. Requests never go through here: their errors are raised.
"""
from __future__ import annotations

from typing import Callable, TypeVar

T = TypeVar("T")


def attempt(fn: Callable[..., T], *args, **kwargs) -> tuple[T | None, Exception | None]:
    """(fn(...), None), or (None, the exception it raised)."""
    try:
        return fn(*args, **kwargs), None
    except Exception as e:  # noqa: BLE001 - a model may raise anything: see the docstring
        return None, e
