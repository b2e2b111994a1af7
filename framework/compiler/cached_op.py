"""The cached op: a compiled graph that a hybridized block (or the server) calls many times.

It owns one `Plan`. Without flags every call runs the plan's generated function. With
`static_alloc` each input-shape signature gets a specialised run function whose intermediate
buffers are allocated once. Specialisations live per thread, so concurrent callers never share a
buffer: the cached op is safe to call from several threads at once.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Callable

import numpy as np

from ..symbol.graph import Symbol
from .plan import Plan

MAX_SIGNATURES = 32   # per thread; the least recently used specialisation is dropped


class CachedOp:
    def __init__(self, symbol: Symbol, input_names: list[str] | None = None,
                 flags: dict | None = None):
        self.flags = dict(flags or {})
        self.symbol = symbol
        self.plan = Plan(symbol, input_names)              # as traced: op hooks see every node
        self.input_names = self.plan.input_names
        from .passes.simplify import simplify
        # the fast path runs the simplified graph (identities gone, constants folded)
        self.fast = Plan(simplify(symbol), self.input_names) if self.flags.get("optimize", True) \
            else self.plan
        self.static_alloc = bool(self.flags.get("static_alloc", False))
        self.static_shape = bool(self.flags.get("static_shape", False))
        # only data inputs vary between calls; parameters keep their shapes
        idx = self.flags.get("data_indices")
        self._data_idx = list(idx) if idx is not None else list(range(len(self.input_names)))
        self._local = threading.local()
        self._run = self.fast.run
        self._checked: set[tuple] = set()        # input dtype signatures already validated

    def _specialised(self, inputs: list[np.ndarray]) -> Callable:
        cache: OrderedDict | None = getattr(self._local, "fns", None)
        if cache is None:
            cache = self._local.fns = OrderedDict()
        sig = tuple((inputs[i].shape, inputs[i].dtype.num) for i in self._data_idx)
        fn = cache.get(sig)
        if fn is None:
            fn = cache[sig] = self.fast.specialize(inputs)
            if len(cache) > MAX_SIGNATURES:
                cache.popitem(last=False)
        return fn

    def check_dtypes(self, inputs: list[np.ndarray]) -> None:
        sig = tuple(inputs[i].dtype.num for i in self._data_idx)   # parameters keep their dtypes
        if sig not in self._checked:
            from .typecheck import check_input_dtypes
            check_input_dtypes(self.symbol, {n: x.dtype for n, x in zip(self.input_names, inputs)})
            self._checked.add(sig)

    def __call__(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        self.check_dtypes(inputs)
        if not self.static_alloc:
            return self._run(inputs)
        fn = self._specialised(inputs)
        try:
            return fn(*inputs)
        except Exception:
            return self._run(inputs)   # re-raises with the failing node named

    def run_hooked(self, inputs: list[np.ndarray], callback, monitor_all: bool = False):
        return self.plan.run_hooked(inputs, callback, monitor_all)

    @property
    def signatures(self) -> list[tuple]:
        return list(getattr(self._local, "fns", {}) or {})
