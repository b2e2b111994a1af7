"""ONNX Runtime sessions for partitioned regions: built once, shared by every calling thread.

`OrtSubgraph` is the engine of one `_sg_onnxruntime` node. It lowers its region at optimisation
time with the region's parameters as initializers (ORT then folds BatchNorm into convolutions and
pre-packs the weights once; feeding them on every call would redo both each time) and keeps one
warm `InferenceSession`, whose leading axis follows the batch. A region whose inputs do not all
carry the batch on axis 0 gets a static session per input shape, built on first use.

Parameters are still inputs of the node, so the graph keeps their names and exports them. The
session takes the parameter arrays by reference (external initializers: no serialised copy of the
weights, no second copy in ORT for what it does not transform) and keeps what it derives from
them (BatchNorm folded into convolutions, pre-packed weights): as with the hybridserve backend's
folded BatchNorm and MXNet's subgraph backends, after `set_data`/`load_parameters` the outputs
are undefined until `optimize_for` runs again.
"""
from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from ..base import OperatorError
from ..symbol.graph import Symbol
from ..symbol.infer import infer_dtypes, infer_shapes
from .build import lower_symbol
from .deps import require

FEATURE = "optimize_for(backend='onnxruntime')"


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:            # not on Linux
        return os.cpu_count() or 1


@dataclass(frozen=True)
class SessionConfig:
    """How sessions are made: execution providers (None: CUDA when onnxruntime-gpu sees a GPU,
    then CPU), intra-op threads per session (0: every usable core; one request at a time gets
    all cores, a server running one forward per core sets 1), and whether those threads spin
    between ops (ORT's default: lower latency, but an idle spinning pool burns CPU)."""
    providers: tuple[str, ...] | None = None
    intra_op_threads: int = 0
    spinning: bool = True
    optimization: str = "all"          # 'disable' | 'basic' | 'extended' | 'all'

    def provider_list(self, ort) -> list[str]:
        if self.providers:
            return list(self.providers)
        gpu = "CUDAExecutionProvider" in ort.get_available_providers()
        return (["CUDAExecutionProvider"] if gpu else []) + ["CPUExecutionProvider"]

    def threads(self) -> int:
        return self.intra_op_threads if self.intra_op_threads > 0 else usable_cores()


_LEVELS = {"disable": "ORT_DISABLE_ALL", "basic": "ORT_ENABLE_BASIC",
           "extended": "ORT_ENABLE_EXTENDED", "all": "ORT_ENABLE_ALL"}


def make_session(model, config: SessionConfig, external: Mapping[str, np.ndarray] | None = None):
    """An InferenceSession of `model` (a ModelProto or its bytes) under `config`; `external`:
    the arrays of the initializers `lower_symbol` left external, handed over by reference (the
    session keeps them alive). ORT then reads the weights in place, with no serialised copy
    (which the Python session would also keep for its lifetime)."""
    ort = require("onnxruntime", FEATURE)
    so = ort.SessionOptions()
    values = [ort.OrtValue.ortvalue_from_numpy(a) for a in (external or {}).values()]
    if values:
        so.add_external_initializers(list(external), values)
    so.graph_optimization_level = getattr(ort.GraphOptimizationLevel, _LEVELS[config.optimization])
    so.intra_op_num_threads = config.threads()
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.add_session_config_entry("session.intra_op.allow_spinning", "1" if config.spinning else "0")
    so.log_severity_level = 3
    data = model if isinstance(model, bytes) else model.SerializeToString()
    session = ort.InferenceSession(data, so, providers=config.provider_list(ort))
    session.hybridserve_initializers = values     # ORT reads them; they must outlive it
    return session


class _Session:
    """One session and how to feed it: (input name, position among the node's inputs)."""
    __slots__ = ("run", "feed", "inputs", "providers")

    def __init__(self, session, positions: Mapping[str, int]):
        self.run = session.run
        self.inputs = session.get_inputs()
        self.providers = tuple(session.get_providers())   # those ORT took, not those asked
        self.feed = [(i.name, positions[i.name]) for i in self.inputs]


class OrtSubgraph:
    """The engine of one subgraph node: `engine(*node_inputs)` → its output(s)."""

    def __init__(self, name: str, symbol: Symbol, params: Mapping[str, np.ndarray],
                 shapes: Mapping[str, tuple], dtypes: Mapping[str, object], dynamic: bool,
                 config: SessionConfig):
        self.name, self.symbol, self.config = name, symbol, config
        self._names = names = symbol.list_inputs()
        self._positions = {n: k for k, n in enumerate(names)}
        self._baked = [(k, params[n]) for k, n in enumerate(names) if n in params]
        self._shapes, self._dtypes = dict(shapes), dict(dtypes)
        self._lock = threading.Lock()
        self._sessions: dict[tuple | None, _Session] = {}
        self.dynamic = dynamic
        first = self._build(None, self._shapes)
        self.dynamic = dynamic and _batch_free(first)
        self._sessions[None if self.dynamic else self._key_of_shapes(self._shapes)] = first
        self._single = len(symbol.outputs) == 1

    @property
    def providers(self) -> tuple[str, ...]:
        """The execution providers the region's sessions run on (ORT drops unavailable ones:
        CUDA asked for on a machine without onnxruntime-gpu or a GPU runs on the CPU)."""
        return next(iter(self._sessions.values())).providers

    # -- inference through the region (the subgraph op's infer_shape / infer_type) --------------
    def infer_shapes(self, in_shapes: list) -> list:
        return self._outputs_of(infer_shapes(self.symbol, dict(zip(self._names, in_shapes))))

    def infer_dtypes(self, in_dtypes: list) -> list:
        return self._outputs_of(infer_dtypes(self.symbol, dict(zip(self._names, in_dtypes))))

    def _outputs_of(self, values: dict) -> list:
        return [values.get((id(n), i)) for n, i in self.symbol.outputs]

    # -- building -------------------------------------------------------------------------------
    def _params(self) -> dict[str, np.ndarray]:
        return {self._names[k]: arr for k, arr in self._baked}

    def _build(self, key, shapes: Mapping[str, tuple]) -> "_Session":
        external: dict[str, np.ndarray] = {}
        model = lower_symbol(self.symbol, self._params(), shapes, self._dtypes,
                             dynamic_batch=key is None and self.dynamic,
                             graph_name=self.name, external=external)
        return _Session(make_session(model, self.config, external), self._positions)

    def _key_of_shapes(self, shapes: Mapping[str, tuple]) -> tuple:
        return tuple(tuple(shapes[n]) for n in self._names if n in shapes)

    def _static(self, inputs: Sequence[np.ndarray]) -> "_Session":
        shapes = {n: tuple(inputs[k].shape) for n, k in self._positions.items()
                  if n in self._shapes}
        key = self._key_of_shapes(shapes)
        sess = self._sessions.get(key)
        if sess is None:
            with self._lock:
                sess = self._sessions.get(key)
                if sess is None:
                    sess = self._sessions[key] = self._build(key, shapes)
        return sess

    # -- running --------------------------------------------------------------------------------
    def __call__(self, *inputs: np.ndarray):
        sess = self._sessions.get(None) if self.dynamic else self._static(inputs)
        try:
            outs = sess.run(None, {name: inputs[k] for name, k in sess.feed})
        except Exception as e:  # noqa: BLE001 - ORT raises its own exception types
            raise OperatorError(f"subgraph node '{self.name}' (op _sg_onnxruntime): "
                                f"onnxruntime failed: {e}") from None
        return outs[0] if self._single else tuple(outs)


def _batch_free(sess: _Session) -> bool:
    """Whether every input of the built session has a symbolic leading axis."""
    return True if not sess.feed else all(_leading_symbolic(i) for i in sess.inputs)


def _leading_symbolic(info) -> bool:
    shape = info.shape
    return bool(shape) and not isinstance(shape[0], int)
