"""ONNX Runtime sessions for partitioned regions: built once, shared by every calling thread.

`OrtSubgraph` is the engine of one `_sg_onnxruntime` node. It lowers its region at optimisation
time with the region's parameters as initializers (ORT then folds BatchNorm into convolutions and
pre-packs the weights once; feeding them on every call would redo both each time) into warm
`InferenceSession`s specialized on the input shapes they are called with (every dim fixed but a
leading batch axis, so ORT plans statically; a region whose inputs do not all carry the batch on
axis 0 is specialized on its whole input shapes), kept in a bounded cache (specialize.py).

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
import warnings
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from ..heap import rss_bytes, trim_heap
from ..base import OperatorError
from ..compiler.plan import Plan
from ..ops import parallel
from ..symbol.graph import Symbol
from ..symbol.infer import infer_dtypes, infer_shapes
from .build import lower_symbol
from .deps import require
from .openvino import openvino_session
from .specialize import ShapeCache, default_capacity
from .verify import differs

FEATURE = "optimize_for(backend='onnxruntime')"


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:            # not on Linux
        return os.cpu_count() or 1


@dataclass(frozen=True)
class SessionConfig:
    """How sessions are made: execution providers (None: CUDA when onnxruntime-gpu sees a GPU,
    then CPU), intra-op threads per session (0: what the user set — see `default_threads`; a
    server running one forward per core sets 1), whether those threads spin between ops (ORT's
    default: lower latency, but an idle spinning pool burns CPU), and how many shape
    specializations each region keeps (0: `HYBRIDSERVE_ORT_SHAPE_CACHE`, else 4) and whether a
    session built for new shapes is first checked against the NumPy kernels on the inputs that
    asked for it (`verify_bound` > 0: within max|Δ| ≤ bound·max(1, max|ref|), else those shapes
    run on NumPy)."""
    providers: tuple[str, ...] | None = None
    intra_op_threads: int = 0
    spinning: bool = True
    optimization: str = "all"          # 'disable' | 'basic' | 'extended' | 'all'
    shape_cache: int = 0
    verify_bound: float = 0.0
    engine: str = "onnxruntime"        # or "openvino" (openvino.py: same lowering, same cache)
    precision: str = "f32"             # openvino only: "bf16" = its INFERENCE_PRECISION_HINT

    def provider_list(self, ort) -> list[str]:
        if self.providers:
            return list(self.providers)
        gpu = "CUDAExecutionProvider" in ort.get_available_providers()
        return (["CUDAExecutionProvider"] if gpu else []) + ["CPUExecutionProvider"]

    def threads(self) -> int:
        return self.intra_op_threads if self.intra_op_threads > 0 else default_threads()


def default_threads() -> int:
    """Intra-op threads when none are asked for: the framework's own setting when raised
    (`framework.ops.set_intra_op_threads(n)`, n > 1), else `OMP_NUM_THREADS` (as
    MXNet's engine reads it) when a positive integer, else every usable core."""
    own = parallel.intra_op_threads()
    if own > 1:
        return own
    try:
        omp = int(os.environ.get("OMP_NUM_THREADS", "").split(",")[0])
    except ValueError:
        omp = 0
    return omp if omp > 0 else usable_cores()


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
    __slots__ = ("run", "feed", "inputs", "providers", "batch_free", "precision",
                 "precision_reason")

    def __init__(self, session, positions: Mapping[str, int]):
        self.run = session.run
        self.precision = getattr(session, "precision", "f32")
        self.precision_reason = getattr(session, "precision_reason", "")
        self.inputs = session.get_inputs()
        self.providers = tuple(session.get_providers())   # those ORT took, not those asked
        self.feed = [(i.name, positions[i.name]) for i in self.inputs]
        self.batch_free = not self.feed or all(_leading_symbolic(i) for i in self.inputs)


_REFUSED = object()      # a shape signature ORT cannot take: the NumPy kernels run it


class OrtSubgraph:
    """The engine of one subgraph node: `engine(*node_inputs)` → its output(s).

    Sessions are specialized on the shapes of the data inputs (parameters never change shape):
    on everything but the batch axis while the region is batch-polymorphic, so that dynamic
    batching (every batch size) shares one session per image size; on the whole shape
    otherwise. They live in a bounded ShapeCache (specialize.py); a signature the cache does not
    admit, one another thread is still building, or one ORT refuses, runs on the region's NumPy
    kernels (the same graph, any shape)."""

    def __init__(self, name: str, symbol: Symbol, params: Mapping[str, np.ndarray],
                 shapes: Mapping[str, tuple], dtypes: Mapping[str, object], dynamic: bool,
                 config: SessionConfig):
        self.name, self.symbol, self.config = name, symbol, config
        self._names = names = symbol.list_inputs()
        self._positions = {n: k for k, n in enumerate(names)}
        self._baked = [(k, params[n]) for k, n in enumerate(names) if n in params]
        self._data = [self._positions[n] for n in names if n in shapes]
        self._shapes, self._dtypes = dict(shapes), dict(dtypes)
        # the sessions are typed: inputs of another dtype (the block called again with other
        # data) run on the NumPy kernels, as MXNet's CachedOp takes any dtype
        self._typed = [(k, np.dtype(self._dtypes[n])) for k, n in enumerate(names)
                       if k in self._data and n in self._dtypes]
        self._build_lock = threading.Lock()
        self._numpy: Plan | None = None
        self.cache: ShapeCache = ShapeCache(config.shape_cache or default_capacity())
        self.fallback_calls = 0
        self.dynamic = dynamic
        first, nbytes = self._build(self._shapes)
        self.dynamic = dynamic and first.batch_free
        shapes = [tuple(self._shapes[names[k]]) for k in self._data]
        self.cache.put(self._key_of(first, *self._keys(shapes)), first, nbytes)
        self._providers = first.providers
        # what the sessions compute in ("bf16" on OpenVINO when asked and the CPU has it)
        self.precision, self.precision_reason = first.precision, first.precision_reason
        self._single = len(symbol.outputs) == 1

    @property
    def providers(self) -> tuple[str, ...]:
        """The execution providers the region's sessions run on (ORT drops unavailable ones:
        CUDA asked for on a machine without onnxruntime-gpu or a GPU runs on the CPU)."""
        return self._providers

    def session_bytes(self) -> int:
        """Resident memory the cached sessions took when built (measured: RSS growth)."""
        return self.cache.nbytes()

    def reset_counts(self) -> None:
        """Forget how often each shape was used (a warm-up's calls say nothing about the
        shapes real traffic brings: specialize.py)."""
        self.cache.reset_counts()

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

    def _build(self, shapes: Mapping[str, tuple]) -> tuple["_Session", int]:
        """A session for these data shapes, and the resident memory it took (RSS growth)."""
        trim_heap()
        before = rss_bytes()
        openvino = self.config.engine == "openvino"
        external: dict[str, np.ndarray] | None = None if openvino else {}  # OpenVINO: inline
        model = lower_symbol(self.symbol, self._params(), shapes, self._dtypes,
                             dynamic_batch=self.dynamic, graph_name=self.name,
                             external=external)
        if openvino:
            made = openvino_session(model, self.config.threads(), self.config.precision)
        else:
            made = make_session(model, self.config, external)
        sess = _Session(made, self._positions)
        del model
        trim_heap()
        return sess, max(0, rss_bytes() - before)

    def _keys(self, shapes) -> tuple[tuple | None, tuple]:
        """The cache keys of the data inputs' shapes (tuples): (without the batch axis, or
        None when the region is not batch-polymorphic; the whole shapes)."""
        return (tuple(s[1:] for s in shapes) if self.dynamic else None), ("static", *shapes)

    def _key_of(self, sess: "_Session", free: tuple | None, full: tuple) -> tuple:
        return free if free is not None and sess.batch_free else full

    def _specialized(self, inputs: Sequence[np.ndarray]):
        """The session for the shapes of `inputs` (built now if admitted), or None."""
        cache, data = self.cache, self._data
        if len(data) == 1:                  # the common case, without building lists
            shape = inputs[data[0]].shape
            free = (shape[1:],) if self.dynamic else None
            if free is not None:
                sess = cache.get(free)
                if sess is not None:
                    return None if sess is _REFUSED else sess
        free, full = self._keys([inputs[k].shape for k in data])   # ndarray shapes: tuples
        sess = (free is not None and cache.get(free)) or cache.get(full)
        if sess is None and cache.admit(free or full) and self._build_lock.acquire(blocking=False):
            try:      # another thread is building: this call runs on NumPy meanwhile
                sess = cache.get(free) if free is not None else None
                sess = sess or cache.get(full) or self._build_missing(inputs, free, full)
            finally:
                self._build_lock.release()
        return None if sess is None or sess is _REFUSED else sess

    def _build_missing(self, inputs: Sequence[np.ndarray], free: tuple | None, full: tuple):
        named = {self._names[k]: tuple(inputs[k].shape) for k in self._data}
        try:
            sess, nbytes = self._build(named)
            why = self._disagreement(sess, inputs) if self.config.verify_bound > 0 else None
        except Exception as e:  # noqa: BLE001 - lowering or ORT refuses these shapes
            why = f"{type(e).__name__}: {e}"
        if why is not None:
            warnings.warn(f"subgraph node '{self.name}': no {self.config.engine} session for "
                          f"input shapes {list(named.values())} ({why}); they run on NumPy",
                          stacklevel=5)
            self.cache.put(free or full, _REFUSED)     # at any batch size
            return _REFUSED
        self.cache.put(self._key_of(sess, free, full), sess, nbytes)
        return sess

    def _disagreement(self, sess: "_Session", inputs: Sequence[np.ndarray]) -> str | None:
        got = sess.run(None, {name: inputs[k] for name, k in sess.feed})
        want = self._numpy_plan().run(list(inputs))
        why = differs(got, want, self.config.verify_bound)
        return None if why is None else f"outputs differ from the NumPy kernels: {why}"

    def _numpy_plan(self) -> Plan:
        plan = self._numpy
        if plan is None:
            plan = self._numpy = Plan(self.symbol, self._names)
        return plan

    def _fallback(self, inputs: Sequence[np.ndarray]):
        self.fallback_calls += 1
        outs = self._numpy_plan().run(list(inputs))
        return outs[0] if self._single else tuple(outs)

    # -- running --------------------------------------------------------------------------------
    def __call__(self, *inputs: np.ndarray):
        sess = self._specialized(inputs)
        if sess is None or any(inputs[k].dtype != dt for k, dt in self._typed):
            return self._fallback(inputs)
        try:
            outs = sess.run(None, {name: inputs[k] for name, k in sess.feed})
        except Exception as e:  # noqa: BLE001 - ORT raises its own exception types
            raise OperatorError(f"subgraph node '{self.name}' (op _sg_onnxruntime): "
                                f"{self.config.engine} failed: {e}") from None
        return outs[0] if self._single else tuple(outs)


def _leading_symbolic(info) -> bool:
    shape = info.shape
    return bool(shape) and not isinstance(shape[0], int)
