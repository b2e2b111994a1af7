"""Which engine compiles a graph, and why: `select_engine()`, the one decision that a plain
`hybridize()`, `optimize_for` and the server all make (MXNet's `MXNET_SUBGRAPH_BACKEND`).

Engines: `onnxruntime` (the default when the `onnxruntime` and `onnx` packages import): the
graph is partitioned as `optimize_for(backend='onnxruntime')` does, ONNX-expressible regions run
by warm sessions, the rest on the NumPy kernels; `openvino` (optional package): the same regions
compiled by OpenVINO, in `f32` or `bf16`; `numpy`: the reference kernels only. Any other name is
an `optimize_for` pass pipeline run on the NumPy kernels (`hybridserve`, `fold_bn`, …).

When nothing is requested: `set_default_engine(name)` (this process), `HYBRIDSERVE_ENGINE`
(`onnxruntime` | `numpy`, the variable the server reads too), `MXNET_SUBGRAPH_BACKEND` (`NONE` →
numpy; MXNet's CPU backend names `MKLDNN`/`ONEDNN` → the default), then what is installed. The
compiled engines' packages register what only they know (which nodes they can take, which
precision the CPU computes natively) with `register_engine` when imported (framework/onnx), so
the compiler never imports them.
"""
from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass, field, replace
from typing import Callable

from ..symbol.graph import Node, Symbol

ORT, NUMPY, OPENVINO = "onnxruntime", "numpy", "openvino"
COMPILED = (ORT, OPENVINO)          # engines of the ONNX lowering (partitioned graphs)
PRECISIONS = ("f32", "bf16")
ENV, MXNET_ENV = "HYBRIDSERVE_ENGINE", "MXNET_SUBGRAPH_BACKEND"
# backend names a user may give for the reference engine (MXNet's NONE disables partitioning)
NUMPY_NAMES = frozenset({"numpy", "none", "reference"})
_ALIASES = {"ort": ORT, "onnxruntime": ORT, "openvino": OPENVINO}
_PIP = {ORT: "onnxruntime", OPENVINO: "hybridserve[openvino]"}
_chosen: str | None = None


@dataclass(frozen=True)
class EngineChoice:
    """The engine a graph runs on, the precision its compiled regions compute in, and why it
    is not what was asked for ("" when it is)."""
    name: str = NUMPY
    precision: str = "f32"
    reason: str = ""
    requested: str = field(default="", compare=False)   # the engine asked for, defaults applied

    @property
    def backend(self) -> str | None:
        """The optimize_for backend that compiles onto it (None: the NumPy reference)."""
        return None if self.name == NUMPY else self.name

    @property
    def compiled(self) -> bool:
        """Whether the graph is partitioned onto a compiled engine (ONNX Runtime, OpenVINO)."""
        return self.name in COMPILED


@dataclass(frozen=True)
class EngineProbe:
    """What a compiled engine's package tells `select_engine`: why a node cannot run on the
    engine (None when it can), and for an engine with precisions, the precision used for the
    one asked and why it differs ("" when it does not)."""
    refusal: Callable[[Node], str | None]
    precision: Callable[[str], tuple[str, str]] | None = None


_PROBES: dict[str, EngineProbe] = {}


def register_engine(name: str, probe: EngineProbe) -> None:
    _PROBES[name] = probe


def join(*reasons: str) -> str:
    return "; ".join(r for r in reasons if r)


def _ort_importable() -> bool:
    return _importable("onnxruntime", "onnx")


def _importable(*modules: str) -> bool:
    return all(importlib.util.find_spec(m) is not None for m in modules)


def _available(name: str) -> bool:
    return _ort_importable() if name == ORT else _importable("openvino", "onnx")


def is_numpy(name: str) -> bool:
    return name.strip().lower() in NUMPY_NAMES


def canonical(name: str) -> str:
    """`numpy`, `onnxruntime`, `openvino`, or the (other) optimize_for backend name as given."""
    key = name.strip().lower()
    return NUMPY if key in NUMPY_NAMES else _ALIASES.get(key, name)


def set_default_engine(name: str | None) -> str | None:
    """Choose the default engine for this process (`None`: back to the environment and what
    is installed); returns the previous choice."""
    global _chosen
    if name is not None and canonical(name) not in (NUMPY, ORT):
        raise ValueError(f"engine must be 'onnxruntime' or 'numpy', got {name!r}")
    prev, _chosen = _chosen, name
    return prev


def _configured() -> tuple[str, str]:
    """(engine, which setting chose it) when nothing is requested."""
    for name, source in ((_chosen, "set_default_engine"), (os.environ.get(ENV), ENV),
                         (os.environ.get(MXNET_ENV), MXNET_ENV)):
        if name and name.strip():
            if is_numpy(name):
                return NUMPY, f"{source}={name.strip()}"
            break
    return ORT, ""


def select_engine(requested: str | None = None, graph: Symbol | None = None,
                  precision: str | None = None, default: str | None = None,
                  fallback: bool = True) -> EngineChoice:
    """The engine (and precision) `graph` compiles onto, with the reason when it is not the
    one requested. `requested`: an engine or optimize_for backend name; None: `default`, else
    the process's setting (module docstring); bf16 with nothing requested means OpenVINO (its
    precision hint). With `fallback`, an engine whose package is missing, or that can take no
    node of `graph`, falls back (openvino → onnxruntime → numpy) with the reason; without it
    (an explicit `optimize_for`) the name stands and its backend raises what is missing.
    ValueError for an unknown precision."""
    precision = precision or "f32"
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {PRECISIONS}, not {precision!r}")
    source = ""
    if requested is None:
        requested = OPENVINO if precision == "bf16" else default
    if requested is None:
        requested, source = _configured()
    name = canonical(requested)
    return replace(_select(name, graph, precision, source, fallback), requested=name)


def _select(name: str, graph: Symbol | None, precision: str, source: str,
            fallback: bool) -> EngineChoice:
    if name not in COMPILED:
        note = f"bf16 not used: the {name} engine runs f32" if precision == "bf16" else ""
        return EngineChoice(name, "f32", join(source, note))
    choice = EngineChoice(name, precision)
    if name == OPENVINO and fallback and not _available(OPENVINO):
        choice = EngineChoice(ORT, "f32", f"openvino not used: {_missing(OPENVINO)}")
    if choice.name == ORT and choice.precision == "bf16":
        choice = EngineChoice(ORT, "f32", "bf16 not used: the onnxruntime engine runs f32")
    if not fallback:
        return _with_precision(choice)
    if not _available(choice.name):
        return EngineChoice(NUMPY, "f32", join(choice.reason, _missing(choice.name)))
    probe = _PROBES.get(choice.name)
    if probe is None:
        return EngineChoice(NUMPY, "f32", join(choice.reason, f"no {choice.name} engine is "
                                               "registered (framework.onnx not imported)"))
    why = _refused(graph, probe) if graph is not None else None
    if why is not None:
        return EngineChoice(NUMPY, "f32", join(choice.reason, why))
    return _with_precision(choice)


def _with_precision(choice: EngineChoice) -> EngineChoice:
    probe = _PROBES.get(choice.name)
    if choice.precision == "f32" or probe is None or probe.precision is None:
        return choice
    used, why = probe.precision(choice.precision)
    return EngineChoice(choice.name, used, join(choice.reason, why and f"bf16 not used: {why}"))


def _missing(name: str) -> str:
    return f"the '{name}' package is not installed (pip install {_PIP[name]})"


def _refused(graph: Symbol, probe: EngineProbe) -> str | None:
    """Why no node of `graph` can run on the engine, or None when one can."""
    first = None
    for n in graph.topo():
        if n.is_var:
            continue
        why = probe.refusal(n)
        if why is None:
            return None
        first = first or f"node '{n.name}' (op {n.opname}): {why}"
    return "no node of the graph lowers to ONNX" + (f" (e.g. {first})" if first else "")


def default_engine() -> str:
    """`onnxruntime` or `numpy`, as the setting, the environment and the installation say."""
    return select_engine().name
