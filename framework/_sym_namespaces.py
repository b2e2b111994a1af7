"""`mx.sym.np` and `mx.sym.npx`: MXNet's numpy-flavoured symbol namespaces. The `np`/`npx`
functions already compose a graph when their inputs are Symbols, so each namespace forwards to
them (plus `mx.sym.np._Symbol`). Attached to `framework.symbol` from here, above both packages,
so that `symbol` never imports `numpy`."""
from __future__ import annotations

import types
from typing import Any

from . import numpy as _np
from . import numpy_extension as _npx
from . import symbol
from .symbol.graph import _Symbol


class _Forward(types.ModuleType):
    def __init__(self, name: str, target: types.ModuleType, **extra: Any):
        super().__init__(name, target.__doc__)
        self._target = target
        self.__dict__.update(extra)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._target, name)


symbol.np = _Forward("framework.symbol.numpy", _np, _Symbol=_Symbol)
symbol.npx = _Forward("framework.symbol.numpy_extension", _npx)
