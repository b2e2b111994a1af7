"""A compiled model: what a caller that runs NumPy arrays (the server) gets from the framework.

One typed object over a hybridized block's cached op with its parameter values filled in: the
data inputs (names, the shapes and dtypes it was compiled on) and outputs, the engine it runs on
(`EngineChoice`: name, precision, why), `run(arrays)`, `run_hooked(arrays, hook)` (the op-hook
loop over every traced node), its static buffer sets, and the compiled regions' sessions with
what they hold in memory. `framework.gluon.compile_model` makes one from a block.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Protocol, Sequence

import numpy as np

from .cached_op import CachedOp
from .engine import NUMPY, EngineChoice, join
from .passes.partition import regions

GRAPHS = ("traced", "optimized", "partitioned")   # as traced; NumPy passes; compiled regions


@dataclass(frozen=True)
class TensorInfo:
    name: str
    shape: tuple[int, ...] | None = None    # of the example it was compiled on
    dtype: np.dtype | None = None


class RegionEngine(Protocol):
    """The engine of one compiled region (framework/onnx/runtime.py OrtSubgraph)."""
    providers: tuple[str, ...]
    precision: str
    precision_reason: str

    def session_bytes(self) -> int: ...

    def reset_counts(self) -> None: ...


class CompiledModel:
    """`model(arrays)` / `model.run(arrays)`: the data arrays in `inputs` order → the outputs."""

    def __init__(self, op: CachedOp, spec: Sequence[tuple], engine: EngineChoice,
                 graph: str = "traced", example: Sequence[np.ndarray] | None = None):
        """`spec`: the cached op's inputs in order, `(True, name, data position)` or
        `(False, name, Parameter)` (HybridBlock.compiled()); `example`: the data arrays it
        was compiled on (their shapes and dtypes describe `inputs`)."""
        if graph not in GRAPHS:
            raise ValueError(f"graph must be one of {GRAPHS}, not {graph!r}")
        self.op = op
        self._args = [None if t[0] else np.asarray(t[-1].data()) for t in spec]
        self._slots = tuple((k, int(t[-1])) for k, t in enumerate(spec) if t[0])
        names = {int(t[-1]): t[1] for t in spec if t[0]}
        ex = list(example or [])
        self.inputs = [TensorInfo(names[i], tuple(ex[i].shape) if i < len(ex) else None,
                                  ex[i].dtype if i < len(ex) else None)
                       for i in sorted(names)]
        self.outputs: list[str] = op.symbol.list_outputs()
        self.regions: list[RegionEngine] = [n.parsed["runner"] for n in regions(op.symbol)]
        self.compiled_nodes = sum(_op_nodes(n.subgraphs[0]) for n in regions(op.symbol))
        self.providers = tuple(dict.fromkeys(p for r in self.regions for p in r.providers))
        self.engine = self._effective(engine)
        # a partition that took no region runs the traced graph's NumPy kernels
        self.graph = "traced" if engine.compiled and not self.regions else graph

    def _effective(self, asked: EngineChoice) -> EngineChoice:
        """What the regions really run: no region means the NumPy kernels; bf16 where a
        region computes in it, with any region's reason for not doing so."""
        if not asked.compiled:
            return asked
        if not self.regions:
            return replace(asked, name=NUMPY, precision="f32",
                           reason=join(asked.reason, "no node of the graph lowers to ONNX"))
        used = "bf16" if any(r.precision == "bf16" for r in self.regions) else "f32"
        note = next((r.precision_reason for r in self.regions if r.precision_reason), "")
        why = f"bf16 not used: {note}" if note else ""
        return replace(asked, precision=used,
                       reason=asked.reason if why in asked.reason else join(asked.reason, why))

    # -- running --------------------------------------------------------------------------------
    def feed(self, arrays: Sequence[np.ndarray]) -> list:
        """The cached op's inputs: the parameter values with `arrays` in the data slots."""
        args = self._args.copy()
        for slot, i in self._slots:
            args[slot] = arrays[i]
        return args

    def run(self, arrays: Sequence[np.ndarray]) -> list[np.ndarray]:
        return self.op(self.feed(arrays))

    __call__ = run

    def run_hooked(self, arrays: Sequence[np.ndarray],
                   hook: Callable[[str, str, np.ndarray], None],
                   monitor_all: bool = False) -> list[np.ndarray]:
        """The NumPy kernels of every traced node (regions expanded), `hook(output name, op
        name, value)` after each: the loop op hooks and inspection use."""
        return self.op.run_hooked(self.feed(arrays), hook, monitor_all)

    # -- memory ---------------------------------------------------------------------------------
    def reserve(self, arrays: Sequence[np.ndarray], n: int) -> None:
        """Pre-build `n` static buffer sets for these shapes (no compile in the first n
        concurrent calls, whichever threads make them)."""
        self.op.reserve(self.feed(arrays), n)

    def release_buffers(self) -> None:
        """Drop the idle static buffer sets (a model kept only for hooked runs needs none)."""
        self.op.clear_buffers()

    def buffer_bytes(self) -> int:
        """Bytes of the idle static buffer sets."""
        return self.op.buffer_bytes()

    def session_bytes(self) -> int:
        """Resident memory the regions' cached sessions took when built, specialized ones
        included (evicted ones no longer count)."""
        return sum(r.session_bytes() for r in self.regions)

    def reset_shape_counts(self) -> None:
        """Forget how often each input shape was used (after a warm-up: specialize.py)."""
        for r in self.regions:
            r.reset_counts()


def _op_nodes(sym) -> int:
    return sum(not n.is_var for n in sym.topo())
