"""The `optimize_for` backends: named graph rewrites
`(Symbol, args, aux, **opts) -> (Symbol, args, aux)`.

The graph layer only keeps the table; the compiler registers its pass pipelines here when it is
imported (compiler/backends.py), so `Symbol.optimize_for` never imports the compiler.
"""
from __future__ import annotations

from typing import Callable

from ..base import MXNetError

Backend = Callable[..., tuple]
_BACKENDS: dict[str, Backend] = {}


def register_backend(*names: str) -> Callable[[Backend], Backend]:
    def deco(fn: Backend) -> Backend:
        for n in names:
            _BACKENDS[n] = fn
        return fn
    return deco


def get_backend(name: str) -> Backend:
    try:
        return _BACKENDS[name]
    except KeyError:
        raise MXNetError(f"Cannot find backend {name!r}; registered backends: "
                         f"{sorted(_BACKENDS)}") from None


def list_backends() -> list[str]:
    return sorted(_BACKENDS)
