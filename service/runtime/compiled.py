"""The compiled forms a Runner serves: a block's cached op bound to its parameter values, and the
`optimize_for` twins of a graph, adopted only when they reproduce the traced graph's outputs:
the ONNX Runtime twin (`backend="onnxruntime"`: ONNX-expressible regions run by warm sessions,
the rest on NumPy kernels) by default, else the NumPy twin (`backend="hybridserve"`).

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

from framework.compiler.passes.partition import regions as graph_regions
from framework.gluon import SymbolBlock
from framework.ndarray import ndarray
from framework.onnx.openvino import effective_precision
from framework.onnx.verify import differs
from framework.symbol import var

from .probe import attempt

log = logging.getLogger("hybridserve.compiled")
BACKEND = "hybridserve"
ORT_BACKEND = "onnxruntime"
RTOL, ATOL = 1e-4, 1e-5            # the optimised graph must stay this close to the traced one
ORT_BOUND = 1e-4                    # ONNX Runtime twin: max|Δ| ≤ ORT_BOUND·max(1, max|ref|)
# an INT8 graph: its engines may round an 8-bit level apart in any layer; allow six levels of an
# int8 output over ±max|ref| (MXNet's 127.5 levels), far below what a wrong kernel gives
INT8_ORT_BOUND = 6 / 127.5
BF16_BOUND = 1e-2                   # bf16 keeps 8 mantissa bits: 2^-8 per op, well under 1e-2
ENGINES = ("onnxruntime", "openvino", "numpy")
COMPILED = ("onnxruntime", "openvino")   # engines of the ONNX lowering (partitioned graphs)


@dataclass(frozen=True)
class OrtOptions:
    """How the server's ONNX Runtime sessions are made (framework/onnx/runtime.py
    SessionConfig): providers None = CUDA when onnxruntime-gpu sees a GPU, then CPU."""
    providers: tuple[str, ...] | None = None
    intra_op_threads: int = 1
    spinning: bool = False
    shape_cache: int = 4            # sessions per region, one per input shape (specialize.py)

    def backend_opts(self) -> dict:
        return {"providers": self.providers, "intra_op_threads": self.intra_op_threads,
                "spinning": self.spinning, "shape_cache": self.shape_cache}


@dataclass(frozen=True)
class Engine:
    """What a Runner's requests run, and why: reported in model metadata (`parameters`), the
    Triton config (`parameters`, string values) and the console."""
    name: str = "numpy"                 # "onnxruntime" | "openvino" | "numpy"
    graph: str = "traced"               # "partitioned" | "optimized" | "traced"
    reason: str = ""                    # why not the engine (or precision) asked for
    providers: tuple[str, ...] = ()
    onnx_nodes: int = 0                 # op nodes of the graph inside the compiled regions
    nodes: int = 0                      # op nodes of the traced graph
    precision: str = "f32"              # what the compiled regions compute in
    top1: str = ""                      # "agreeing/rows" with the reference, (N, classes) outputs

    def parameters(self) -> dict[str, str | int]:
        p: dict[str, str | int] = {"engine": self.name, "engine_graph": self.graph}
        if self.name in COMPILED:
            p.update({"execution_providers": ",".join(self.providers),
                      f"{self.name}_nodes": self.onnx_nodes, "graph_nodes": self.nodes,
                      "precision": self.precision})
        if self.top1:
            p["top1_agreement"] = self.top1
        if self.reason:
            p["engine_fallback_reason"] = self.reason
        return p


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
    def build():
        bound = _twin(block, data_names, checks[0], BACKEND)
        return bound, [bound(arrays) for arrays in checks]

    res, e = attempt(build)
    if e is not None:       # a pass that cannot handle this graph: serve it as traced
        log.warning("graph optimisation failed for %s, serving the traced graph: %r", what, e)
        return None
    bound, got = res
    if not all(outputs_match(g, e, RTOL, ATOL) for g, e in zip(got, expected)):
        log.warning("optimised graph of %s differs from the traced graph beyond rtol %g / atol "
                    "%g; serving the traced graph", what, RTOL, ATOL)
        return None
    return bound


def _twin(block, data_names: list[str], example: list[np.ndarray], backend: str,
          **opts) -> BoundOp:
    """`block`'s graph through `optimize_for(backend)`, specialised on `example`."""
    syms = _typed_vars(data_names, example)
    twin = SymbolBlock(block(*syms), syms, params=block.collect_params())
    twin.optimize_for(*[ndarray(a) for a in example], backend=backend, static_alloc=True,
                      static_shape=True, **opts)
    return BoundOp.of(twin)


def _typed_vars(names: list[str], arrays: list[np.ndarray]) -> list:
    """Data variables typed as the check inputs: parameter dtypes are inferred from them (an
    INT8 export's int8 weights stay int8 instead of defaulting to float32)."""
    return [var(n, dtype=np.asarray(a).dtype.name).as_np_ndarray() for n, a in zip(names, arrays)]


def within_bound(got: list, want: list, bound: float | None = None) -> str | None:
    """None when `got` reproduces `want` within max|Δ| ≤ bound·max(1, max|want|) (default
    ORT_BOUND; framework/onnx/verify.py), else what differs."""
    return differs(got, want, ORT_BOUND if bound is None else bound)


def _op_nodes(sym) -> int:
    return sum(not n.is_var for n in sym.topo())


def ort_twin(block, data_names: list[str], checks: list[list[np.ndarray]],
             expected: list[list[np.ndarray]], what: str, opts: OrtOptions,
             engine: str = ORT_BACKEND, precision: str = "f32"
             ) -> tuple[BoundOp | None, Engine | str]:
    """`block`'s graph through `optimize_for(backend=engine)` ("onnxruntime", or "openvino" in
    `precision`) and its Engine, if at least one region lowers and its outputs on every input of
    `checks` stay within the bound of `expected` (bf16: BF16_BOUND); otherwise `(None, why
    not)`, logged."""
    quantized = is_quantized(block_symbol(block))

    def build():
        if engine == "openvino":
            used, _ = effective_precision(precision)     # imports openvino: may refuse here
            backend_opts = {"precision": precision,
                            "intra_op_threads": opts.intra_op_threads,
                            "shape_cache": opts.shape_cache}
        else:
            used, backend_opts = "f32", opts.backend_opts()
        limit = INT8_ORT_BOUND if quantized else BF16_BOUND if used == "bf16" else ORT_BOUND
        # sessions built later for other input shapes are checked like this one
        bound = _twin(block, data_names, checks[0], engine, verify_bound=limit, **backend_opts)
        regions = graph_regions(bound.op.symbol)
        return bound, regions, [bound(arrays) for arrays in checks] if regions else [], limit

    res, e = attempt(build)
    if e is not None:       # missing package, lowering or session failure
        return _refuse(what, engine, f"{type(e).__name__}: {e}"[:500])
    bound, regions, got, limit = res
    if not regions:
        return _refuse(what, engine, "no node of the graph lowers to ONNX")
    for g, e in zip(got, expected):
        why = within_bound(g, e, limit)
        if why is not None:
            return _refuse(what, engine, f"outputs differ from the NumPy reference: {why}")
    runners = [n.parsed["runner"] for n in regions]
    inside = sum(_op_nodes(n.subgraphs[0]) for n in regions)
    providers = tuple(dict.fromkeys(p for r in runners for p in r.providers))
    used = "bf16" if any(r.precision == "bf16" for r in runners) else "f32"
    note = next((r.precision_reason for r in runners if r.precision_reason), "")
    return bound, Engine(engine, "partitioned", f"bf16 not used: {note}" if note else "",
                         providers, inside, _op_nodes(block_symbol(block)), used,
                         top1_agreement(got, expected))


def top1_agreement(got: list[list], want: list[list]) -> str:
    """"agreeing/rows" of the first output's argmax over the last axis, when it is
    (N, classes) with classes > 1; "" otherwise."""
    agree = rows = 0
    for g, w in zip(got, want):
        g, w = np.asarray(g[0]), np.asarray(w[0])
        if g.ndim != 2 or g.shape[1] < 2 or g.shape != w.shape:
            return ""
        agree += int(np.sum(np.argmax(g, 1) == np.argmax(w, 1)))
        rows += g.shape[0]
    return f"{agree}/{rows}" if rows else ""


def is_quantized(sym) -> bool:
    """Whether the graph computes on 8-bit levels (an INT8 model)."""
    return any(n.op is not None and n.op.is_quantized(n.parsed) for n in sym.topo())


def block_symbol(block):
    """The traced graph of a hybridized block that has run."""
    return block.compiled()[0].symbol


def _refuse(what: str, engine: str, reason: str) -> tuple[None, str]:
    log.warning("%s engine unavailable for %s, serving %s: %s", engine, what,
                "onnxruntime (or NumPy)" if engine == "openvino" else "NumPy", reason)
    return None, reason
