"""The compiled forms a Runner serves: a block's cached op bound to its parameter values, and the
`optimize_for` twin of a graph, adopted only when it reproduces the traced graph's outputs.

The twin is a second SymbolBlock over the same graph and the same Parameter objects, so the
loaded block keeps its traced graph (export, parameter listing, op-hook inspection by original
node names) while requests run the rewritten one (BatchNorm folded, channels-last, fused
epilogues). Only the parameters the backend rewrites cost extra memory.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from framework.gluon import SymbolBlock
from framework.ndarray import ndarray
from framework.symbol import var

log = logging.getLogger("hybridserve.runner")
BACKEND = "hybridserve"
RTOL, ATOL = 1e-4, 1e-5            # the optimised graph must stay this close to the traced one


@dataclass(frozen=True)
class BoundOp:
    """A cached op with its parameters filled in: `bound(arrays)` takes the data arrays only."""
    op: Any                                 # framework.compiler.CachedOp
    args: list                              # op inputs in order; None where data goes
    slots: tuple[tuple[int, int], ...]      # (op input position, data array index)

    @classmethod
    def of(cls, block) -> "BoundOp":
        """From a hybridized block that has run once (`block.compiled()` spec entries are
        `(True, name, data index)` or `(False, name, Parameter)`)."""
        op, spec = block.compiled()
        args = [None if t[0] else np.asarray(t[-1].data()) for t in spec]
        return cls(op, args, tuple((k, int(t[-1])) for k, t in enumerate(spec) if t[0]))

    def feed(self, arrays: list[np.ndarray]) -> list:
        args = self.args.copy()
        for slot, i in self.slots:
            args[slot] = arrays[i]
        return args

    def __call__(self, arrays: list[np.ndarray]) -> list[np.ndarray]:
        return self.op(self.feed(arrays))

    def run_hooked(self, arrays: list[np.ndarray], callback: Callable, monitor_all: bool):
        return self.op.run_hooked(self.feed(arrays), callback, monitor_all)

    def reserve(self, arrays: list[np.ndarray], n: int) -> None:
        """Pre-build `n` buffer sets for these shapes (no compile in the first n concurrent
        calls, whichever threads make them)."""
        reserve = getattr(self.op, "reserve", None)
        if reserve is not None:
            reserve(self.feed(arrays), n)


def outputs_match(got: list, want: list, rtol: float = 0.0, atol: float = 0.0) -> bool:
    """Same count, shapes and dtypes; floats within tolerance (NaN where NaN), others equal."""
    if len(got) != len(want):
        return False
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        if g.shape != w.shape or g.dtype != w.dtype:
            return False
        if w.dtype.kind in "fc":
            if not np.allclose(g, w, rtol=rtol, atol=atol, equal_nan=True):
                return False
        elif not np.array_equal(g, w):
            return False
    return True


def verification_inputs(shapes_dtypes: list[tuple[tuple, np.dtype]]) -> list[np.ndarray]:
    """Non-degenerate, reproducible inputs: uniform [0, 1) floats (a zero image would hide a
    wrong conv layout behind bias-only outputs; values below 1 stay valid as indices), zeros
    for other dtypes."""
    rng = np.random.default_rng(20240501)
    return [rng.random(shape, np.float64).astype(dt) if np.dtype(dt).kind == "f"
            else np.zeros(shape, dt) for shape, dt in shapes_dtypes]


def optimised_twin(block, data_names: list[str], checks: list[list[np.ndarray]],
                   expected: list[list[np.ndarray]], what: str) -> BoundOp | None:
    """`block`'s graph through `optimize_for(backend="hybridserve")` (example: the first check
    input), if its outputs on every input of `checks` match `expected` (the traced graph's)
    within RTOL/ATOL; None, logged, otherwise."""
    try:
        syms = [var(n).as_np_ndarray() for n in data_names]
        twin = SymbolBlock(block(*syms), syms, params=block.collect_params())
        twin.optimize_for(*[ndarray(a) for a in checks[0]], backend=BACKEND, static_alloc=True,
                          static_shape=True)
        bound = BoundOp.of(twin)
        got = [bound(arrays) for arrays in checks]
    except Exception as e:  # noqa: BLE001 - a pass that cannot handle this graph: serve it as traced
        log.warning("graph optimisation failed for %s, serving the traced graph: %r", what, e)
        return None
    if not all(outputs_match(g, e, RTOL, ATOL) for g, e in zip(got, expected)):
        log.warning("optimised graph of %s differs from the traced graph beyond rtol %g / atol "
                    "%g; serving the traced graph", what, RTOL, ATOL)
        return None
    return bound
