"""The compiled forms a Runner serves, as the framework's `CompiledModel`s (framework.gluon
`compile_model`): the block's own cached op (the traced graph: inspection, the reference), and
the `optimize_for` twins of its graph, adopted only when they reproduce the traced graph's
outputs: the engine `select_engine` chose (ONNX Runtime, OpenVINO) first, else the NumPy
optimize_for twin (`BACKEND`).

A twin shares the loaded block's Parameter objects, so the block keeps its traced graph
(export, parameter listing, op-hook inspection by original node names) while requests run the
rewritten one (BatchNorm folded, channels-last, fused epilogues, compiled regions). Only the
parameters the backend rewrites cost extra memory.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np

from framework.compiler.compiled import CompiledModel
from framework.compiler.engine import COMPILED, OPENVINO, EngineChoice
from framework.gluon import compile_model
from framework.base import is_bfloat16
from framework.ops.groups import OpGroup
from framework.onnx.verify import differs

from .probe import attempt

log = logging.getLogger("hybridserve.compiled")
BACKEND = "hybridserve"
RTOL, ATOL = 1e-4, 1e-5            # the optimised graph must stay this close to the traced one
ORT_BOUND = 1e-4                    # ONNX Runtime twin: max|Δ| ≤ ORT_BOUND·max(1, max|ref|)
# an INT8 graph: its engines may round an 8-bit level apart in any layer; allow six levels of an
# int8 output over ±max|ref| (MXNet's 127.5 levels), far below what a wrong kernel gives
INT8_ORT_BOUND = 6 / 127.5
BF16_BOUND = 1e-2                   # bf16 keeps 8 mantissa bits: 2^-8 per op, well under 1e-2


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
                   expected: list[list[np.ndarray]], what: str) -> CompiledModel | None:
    """`block`'s graph through `optimize_for(backend=BACKEND)` (example: the first check
    input), if its outputs on every input of `checks` match `expected` (the traced graph's)
    within RTOL/ATOL; None, logged, otherwise."""
    def build():
        model = compile_model(block, checks[0], EngineChoice(BACKEND), data_names)
        return model, [model(arrays) for arrays in checks]

    res, e = attempt(build)
    if e is not None:       # a pass that cannot handle this graph: serve it as traced
        log.warning("graph optimisation failed for %s, serving the traced graph: %r", what, e)
        return None
    model, got = res
    if not all(outputs_match(g, e, RTOL, ATOL) for g, e in zip(got, expected)):
        log.warning("optimised graph of %s differs from the traced graph beyond rtol %g / atol "
                    "%g; serving the traced graph", what, RTOL, ATOL)
        return None
    return model


def within_bound(got: list, want: list, bound: float | None = None) -> str | None:
    """None when `got` reproduces `want` within max|Δ| ≤ bound·max(1, max|want|) (default
    ORT_BOUND; framework/onnx/verify.py), else what differs."""
    return differs(got, want, ORT_BOUND if bound is None else bound)


def ort_twin(block, reference: CompiledModel, data_names: list[str],
             checks: list[list[np.ndarray]], expected: list[list[np.ndarray]], what: str,
             opts: OrtOptions, choice: EngineChoice) -> tuple[CompiledModel | None, Engine | str]:
    """`block`'s graph compiled onto `choice` (ONNX Runtime, or OpenVINO in its precision)
    and its Engine, if at least one region lowers and its outputs on every input of `checks`
    stay within the bound of `expected` (INT8 graphs: INT8_ORT_BOUND, bf16: BF16_BOUND);
    otherwise `(None, why not)`, logged. `reference`: the traced graph's model."""
    quantized = is_quantized(reference.op.symbol)
    low = holds_bfloat16(reference.op.symbol)     # amp's casts: engines may round elsewhere
    limit = INT8_ORT_BOUND if quantized else BF16_BOUND if choice.precision == "bf16" or low \
        else ORT_BOUND
    backend_opts = opts.backend_opts() if choice.name != OPENVINO else {
        "intra_op_threads": opts.intra_op_threads, "shape_cache": opts.shape_cache}

    def build():
        # sessions built later for other input shapes are checked like this one
        model = compile_model(block, checks[0], choice, data_names, verify_bound=limit,
                              **backend_opts)
        return model, [model(arrays) for arrays in checks] if model.regions else []

    res, e = attempt(build)
    if e is not None:       # missing package, lowering or session failure
        return _refuse(what, choice.name, f"{type(e).__name__}: {e}"[:500])
    model, got = res
    if not model.regions:
        return _refuse(what, choice.name, "no node of the graph lowers to ONNX")
    for g, e in zip(got, expected):
        why = within_bound(g, e, limit)
        if why is not None:
            return _refuse(what, choice.name, f"outputs differ from the NumPy reference: {why}")
    return model, Engine(model.engine.name, model.graph, model.engine.reason, model.providers,
                         model.compiled_nodes, _op_nodes(reference.op.symbol),
                         model.engine.precision, top1_agreement(got, expected))


def _op_nodes(sym) -> int:
    return sum(not n.is_var for n in sym.topo())


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


def holds_bfloat16(sym) -> bool:
    """Whether the graph rounds to bfloat16 (contrib.amp's casts, bfloat16 parameters): engines
    may round at other points, so its twin is held to the bf16 bound."""
    return any(n.attrs.get("__dtype__") == "12" if n.is_var
               else n.op.name in OpGroup.AMP and is_bfloat16(n.parsed.get("dtype"))
               for n in sym.topo())


def _refuse(what: str, engine: str, reason: str) -> tuple[None, str]:
    log.warning("%s engine unavailable for %s, serving %s: %s", engine, what,
                "onnxruntime (or NumPy)" if engine == "openvino" else "NumPy", reason)
    return None, reason
