"""The cached op: a compiled graph that a hybridized block (or the server) calls many times.

It owns two plans of one graph: `plan`, exactly as traced (op hooks and inspection see every
node; regions an optimize_for backend partitioned out are expanded back), and `fast`, the simplified graph the normal calls run. A new input signature (data shapes
and dtypes) is validated once (dtype consistency). With `static_alloc` each signature also gets
specialised run functions whose intermediate buffers are planned once. They are kept in a pool per
signature: a call takes an idle one (or compiles a new one) and puts it back afterwards, so
concurrent callers never share a buffer (the cached op is thread-safe), there are only as many
buffer sets as calls that ever ran at once, and a set built by one thread (e.g. a warm-up) serves
any other thread. Outputs never live in planned buffers (memory_plan.py), so handing a set to the
next caller cannot overwrite a result the previous caller still holds.

With the kernels' intra-op threads on, a batch is split over the threads for the whole forward
(one hand-over per call rather than per op, which the GIL and thread wake-ups make costly), once
the first call of that signature has shown the samples to be independent.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Callable

import numpy as np

from ..ops import parallel
from ..symbol.graph import Symbol
from .passes.partition import expand
from .passes.simplify import simplify
from .plan import Plan
from .typecheck import check_input_dtypes

MAX_SIGNATURES = 32   # beyond it the oldest signature's buffer sets are dropped
MAX_IDLE_SETS = 64    # per signature: a burst beyond it compiles sets that are not kept


class CachedOp:
    def __init__(self, symbol: Symbol, input_names: list[str] | None = None,
                 flags: dict | None = None):
        self.flags = dict(flags or {})
        self.symbol = symbol
        # hooks and inspection run the NumPy kernels of every node, also of partitioned regions
        whole = expand(symbol)
        self.plan = Plan(whole, input_names)
        self.input_names = self.plan.input_names
        if self.flags.get("optimize", True):
            self.fast = Plan(simplify(symbol), self.input_names)
        else:
            self.fast = self.plan if whole is symbol else Plan(symbol, self.input_names)
        self.static_alloc = bool(self.flags.get("static_alloc", False))
        self.static_shape = bool(self.flags.get("static_shape", False))
        # only data inputs vary between calls; parameters keep their shapes and dtypes
        idx = self.flags.get("data_indices")
        self._data_idx = list(idx) if idx is not None else list(range(len(self.input_names)))
        # signature → idle specialisations; list.pop/append are atomic, so calls take no lock
        self._pools: OrderedDict[tuple, list[Callable]] = OrderedDict()
        self._pools_lock = threading.Lock()
        self._checked: set[tuple] = set()
        self._split_ok: dict[tuple, bool] = {}   # signature → samples proved independent
        self._set_bytes: dict[tuple, int] = {}   # signature → bytes of one planned buffer set

    def _signature(self, inputs: list[np.ndarray]) -> tuple:
        di = self._data_idx
        if len(di) == 1:
            x = inputs[di[0]]
            return x.shape, x.dtype.num
        return tuple((inputs[i].shape, inputs[i].dtype.num) for i in di)

    def _validate(self, sig: tuple, inputs: list[np.ndarray]) -> None:
        check_input_dtypes(self.symbol, {n: x.dtype for n, x in zip(self.input_names, inputs)})
        if len(self._checked) < 4 * MAX_SIGNATURES:
            self._checked.add(sig)

    def _idle(self, sig: tuple) -> Callable | None:
        idle = self._pools.get(sig)
        if idle:
            try:
                return idle.pop()
            except IndexError:          # another thread took the last one meanwhile
                pass
        return None

    def _give(self, sig: tuple, fn: Callable) -> None:
        idle = self._pools.get(sig)
        if idle is None:
            with self._pools_lock:
                idle = self._pools.setdefault(sig, [])
                while len(self._pools) > MAX_SIGNATURES:
                    self._set_bytes.pop(self._pools.popitem(last=False)[0], None)
        if len(idle) < MAX_IDLE_SETS:
            idle.append(fn)

    def __call__(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        sig = self._signature(inputs)
        if sig not in self._checked:
            self._validate(sig, inputs)
        if not self.static_alloc:
            return self.fast.run(inputs)
        if parallel._nthreads > 1 and self._split_ok.get(sig, True):
            batch = self._batch_of(inputs)
            if batch >= 2:
                return self._batch_split(sig, inputs, batch)
        return self._run_static(sig, inputs)

    def _run_static(self, sig: tuple, inputs: list[np.ndarray]) -> list[np.ndarray]:
        fn = self._idle(sig)
        if fn is None:                     # new shapes, or every set is busy: plan one more
            fn, outs, memory = self.fast.specialize_plan(inputs)
            self._set_bytes[sig] = memory.planned_bytes
            self._give(sig, fn)
            return outs
        try:
            return fn(*inputs)
        except Exception:
            # unplanned run: a genuine failure raises again, now naming the failing node
            return self.fast.run(inputs)
        finally:
            self._give(sig, fn)

    # -- batches over the intra-op threads ------------------------------------------------------
    # One hand-over per forward instead of one per op: each helper thread runs the whole plan on
    # its share of the samples (its ops then run serially). Only for graphs whose samples are
    # independent, which the first call of each signature checks by running both ways.
    def _batch_of(self, inputs: list[np.ndarray]) -> int:
        sizes = {inputs[i].shape[0] if inputs[i].ndim else -1 for i in self._data_idx}
        return sizes.pop() if len(sizes) == 1 else 0

    def _split_run(self, inputs: list[np.ndarray], batch: int) -> list[np.ndarray]:
        parts = parallel.split(batch, min(batch, parallel._nthreads))
        data = set(self._data_idx)
        feeds = [[x[a:b] if i in data else x for i, x in enumerate(inputs)] for a, b in parts]
        sigs = [self._signature(f) for f in feeds]
        for sig, f in zip(sigs, feeds):
            if sig not in self._checked:
                self._validate(sig, f)
        outs: list = [None] * len(parts)

        def run(k: int) -> None:
            outs[k] = self._run_static(sigs[k], feeds[k])
        parallel.run(run, len(parts))
        return [np.concatenate([o[j] for o in outs]) for j in range(len(outs[0]))]

    def _batch_split(self, sig: tuple, inputs: list[np.ndarray], batch: int) -> list[np.ndarray]:
        if sig in self._split_ok:
            return self._split_run(inputs, batch)
        whole = self._run_static(sig, inputs)
        try:
            split = self._split_run(inputs, batch)
            ok = len(split) == len(whole) and all(
                s.shape == w.shape and s.dtype == w.dtype
                and (w.dtype.kind not in "fc" and np.array_equal(s, w)
                     or w.dtype.kind in "fc" and np.allclose(s, w, rtol=1e-5, atol=1e-6,
                                                             equal_nan=True))
                for s, w in zip(split, whole))
        except Exception:  # noqa: BLE001 - e.g. a graph that needs the whole batch
            ok = False
        self._split_ok[sig] = ok
        return whole

    def reserve(self, inputs: list[np.ndarray], n: int) -> None:
        """Have at least `n` idle buffer sets for the signature of `inputs`, so the first `n`
        concurrent calls with that signature (from any threads) do not compile."""
        if not self.static_alloc:
            return
        sig = self._signature(inputs)
        if sig not in self._checked:
            self._validate(sig, inputs)
        taken = [self._idle(sig) or self._plan_set(sig, inputs) for _ in range(max(0, n))]
        for fn in taken:
            self._give(sig, fn)

    def _plan_set(self, sig: tuple, inputs: list[np.ndarray]) -> Callable:
        fn, _, memory = self.fast.specialize_plan(inputs)
        self._set_bytes[sig] = memory.planned_bytes
        return fn

    def run_hooked(self, inputs: list[np.ndarray], callback, monitor_all: bool = False):
        return self.plan.run_hooked(inputs, callback, monitor_all)

    @property
    def signatures(self) -> list[tuple]:
        return list(self._pools or self._checked)

    def clear_buffers(self) -> None:
        """Drop the idle buffer sets (e.g. of an op now kept only for hooked runs, which
        allocate as they go); later calls plan new ones as needed."""
        with self._pools_lock:
            self._pools.clear()

    def buffer_bytes(self) -> int:
        """Bytes of the idle static buffer sets (what `clear_buffers` would free)."""
        return sum(n * self._set_bytes.get(sig, 0) for sig, n in self.idle_sets().items())

    def idle_sets(self) -> dict[tuple, int]:
        """Signature → buffer sets ready for the next calls (diagnostics and tests)."""
        return {sig: len(fns) for sig, fns in list(self._pools.items())}
