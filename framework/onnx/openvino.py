"""OpenVINO as a second engine of the ONNX lowering: a region's ONNX model compiled for the CPU.

`openvino_session(model, config)` returns an object with the slice of ONNX Runtime's
InferenceSession that the region engine (runtime.py) uses — `run(None, feed)`, `get_inputs()`,
`get_providers()` — so shape specialization, the NumPy fallback and verification are shared.

Precision: "f32", or "bf16" (OpenVINO's `INFERENCE_PRECISION_HINT`: weights and activations
in bfloat16 where the CPU computes them natively). A CPU whose `OPTIMIZATION_CAPABILITIES` lack
BF16 would emulate it slowly, so bf16 falls back to f32 there, with the reason kept in
`precision_reason` (and warned once). Threads follow the same policy as ONNX Runtime's sessions
(`SessionConfig.threads()`: the framework's setting, else OMP_NUM_THREADS, else all cores).
"""
from __future__ import annotations

import functools
import threading
import warnings
from typing import Mapping

import numpy as np

from .deps import require

FEATURE = "optimize_for(backend='openvino')"
PRECISIONS = ("f32", "bf16")
DEVICE = "CPU"


@functools.lru_cache(maxsize=1)
def _core():
    ov = require("openvino", FEATURE)
    return ov.Core()


CPU_BF16_FLAGS = ("avx512_bf16", "amx_bf16")


def cpu_bf16_flags(cpuinfo: str = "/proc/cpuinfo") -> set[str] | None:
    """The bf16 instruction-set flags the kernel reports for this CPU (None: not readable)."""
    try:
        with open(cpuinfo, encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[-1].split()) & set(CPU_BF16_FLAGS)
    except OSError:
        return None
    return None


def bf16_support() -> str | None:
    """None when the CPU computes bf16 natively (OpenVINO reports BF16; where OpenVINO cannot
    say, the CPU's avx512_bf16/amx_bf16 flags decide), else why not."""
    flags = cpu_bf16_flags()
    seen = ("" if flags is None else f"; /proc/cpuinfo: {', '.join(sorted(flags))}" if flags
            else f"; /proc/cpuinfo has neither {' nor '.join(CPU_BF16_FLAGS)}")
    try:
        caps = _core().get_property(DEVICE, "OPTIMIZATION_CAPABILITIES")
    except Exception as e:  # noqa: BLE001 - OpenVINO's own exception types
        return None if flags else f"OpenVINO cannot report the CPU's capabilities: {e}{seen}"
    if "BF16" in [str(c).upper() for c in caps]:
        return None
    return (f"this CPU has no native bf16 (OpenVINO {DEVICE} capabilities: "
            f"{', '.join(map(str, caps))}{seen}); running f32")


def effective_precision(asked: str) -> tuple[str, str]:
    """(the precision sessions compile with, why it is not the one asked for, or "")."""
    if asked not in PRECISIONS:
        raise ValueError(f"{FEATURE}: precision must be one of {PRECISIONS}, not {asked!r}")
    if asked == "bf16":
        why = bf16_support()
        if why is not None:
            return "f32", why
    return asked, ""


class _Input:
    __slots__ = ("name", "shape")

    def __init__(self, name: str, shape: list):
        self.name, self.shape = name, shape


class OpenVinoSession:
    """One compiled model; thread-safe: each calling thread runs its own infer request (made
    at its first call, then reused: a request holds its output buffers)."""

    def __init__(self, compiled, precision: str, reason: str):
        self._compiled = compiled
        self._local = threading.local()
        self.precision, self.precision_reason = precision, reason
        self._outputs = list(compiled.outputs)
        self._inputs = [_Input(p.get_any_name(), [d.get_length() if d.is_static else "batch"
                                                  for d in p.get_partial_shape()])
                        for p in compiled.inputs]

    def get_inputs(self) -> list[_Input]:
        return self._inputs

    def get_providers(self) -> list[str]:
        return [f"OpenVINO{DEVICE}:{self.precision}"]

    def run(self, _names, feed: Mapping[str, np.ndarray]) -> list[np.ndarray]:
        request = getattr(self._local, "request", None)
        if request is None:
            request = self._local.request = self._compiled.create_infer_request()
        # outputs copied (share_outputs=False): the request's buffers are reused next call
        result = request.infer(dict(feed), share_inputs=True, share_outputs=False)
        return [np.asarray(result[o]) for o in self._outputs]


def openvino_session(model, threads: int, precision: str = "f32") -> OpenVinoSession:
    """`model` (an ONNX ModelProto or its bytes, initializers inside) compiled for the CPU with
    `threads` inference threads, in `precision` ("bf16" falls back to "f32" without native
    support: `precision_reason` says why)."""
    core = _core()
    used, why = effective_precision(precision)
    if why:
        warnings.warn(f"{FEATURE}: bf16 asked for, {why}", stacklevel=3)
    data = model if isinstance(model, bytes) else model.SerializeToString()
    ov_model = core.read_model(model=data, weights=b"")
    config = {"INFERENCE_PRECISION_HINT": used, "INFERENCE_NUM_THREADS": max(1, int(threads)),
              "PERFORMANCE_HINT": "LATENCY", "NUM_STREAMS": 1}
    return OpenVinoSession(core.compile_model(ov_model, DEVICE, config), used, why)
