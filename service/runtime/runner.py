"""One loaded model version: a hybridized SymbolBlock whose cached op stays warm.

Loading does everything that depends only on the model (parse, params, compile, optimise, warm at
the declared shapes), so a request only validates its arrays and runs the framework's
`CompiledModel` with NumPy arrays directly (no ndarray wrapping, no block dispatch). The engine
is the framework's `select_engine` choice (the model's config, else the server's setting):
requests run its twin of the graph (ONNX Runtime by default) when it reproduces the traced NumPy
graph on the warm-up inputs, else the NumPy `optimize_for` twin when that does, else the traced
graph (compiled.py; `engine` says which and why). Op-hook inspection always runs the traced
NumPy graph, so it reports the model's own nodes with their real tensors.
"""
from __future__ import annotations

import logging
import math
import threading
import time
import warnings
from dataclasses import replace
from pathlib import Path
from typing import Callable

import numpy as np

from framework.base import MXNetError
from framework.compiler.compiled import CompiledModel
from framework.compiler.engine import OPENVINO, ORT, EngineChoice, join, select_engine
from framework.compiler.plan import Plan
from framework.gluon import SymbolBlock, compile_model
from framework.io import ParamsFormatError, load_params, strip_prefixes
from framework.symbol.json_io import load_json

from ..errors import BadRequest
from ..limits import check_activations, check_inputs, check_json_depth
from ..protocol.types import InferInput
from ..repository.config import ModelConfig
from ..repository.store import ModelFiles
from .analysis import GraphFacts
from .probe import attempt
from .int8 import quantize_for_serving
from .compiled import Engine, OrtOptions, optimised_twin, ort_twin, verification_inputs
from .signature import (IOSpec, concrete, default_input, example_free, infer_outputs, param_vars,
                        output_names)
from .summary import input_shapes
from .transforms import Transforms

log = logging.getLogger("hybridserve.runner")
# SymbolBlock (as MXNet's) warns this for every untyped data input; as noise in
# server logs it only hides real problems
warnings.filterwarnings("ignore", message="Cannot decide type for the following arguments",
                        category=UserWarning)
MAX_WARM_SIZES = 4


def _load_error(what: str, e: Exception) -> BadRequest:
    return BadRequest(f"cannot load model: {what}: {e}"[:2000])


def _read_files(files: ModelFiles, max_nodes: int, max_params_bytes: int | None,
                max_symbol_bytes: int, max_json_depth: int, say: Callable[[str], None]
                ) -> tuple[object, dict[str, np.ndarray]]:
    """The graph and the named parameters, every size checked before it is read."""
    sym_path = Path(files.symbol)
    size = sym_path.stat().st_size
    if size > max_symbol_bytes:
        raise BadRequest(f"cannot load model: symbol file '{sym_path.name}' is {size} bytes, "
                         f"over the limit of {max_symbol_bytes}")
    say(f"parsing graph ({size} bytes)")
    try:
        raw_sym = sym_path.read_bytes()
        check_json_depth(raw_sym, max_json_depth, f"symbol file '{sym_path.name}'")
        sym = load_json(raw_sym, max_nodes=max_nodes, max_bytes=max_symbol_bytes)
    except (MXNetError, ValueError, RecursionError) as e:
        raise _load_error(f"symbol file '{sym_path.name}'", e) from None
    params: dict[str, np.ndarray] = {}
    if files.params is None:
        return sym, params
    p = Path(files.params)
    size = p.stat().st_size
    if max_params_bytes is not None and size > max_params_bytes:
        raise BadRequest(f"cannot load model: params file '{p.name}' is {size} bytes, over "
                         f"the limit of {max_params_bytes}")
    say(f"reading parameters ({size} bytes)")
    try:
        raw = load_params(p.read_bytes(), max_bytes=max_params_bytes)
        if not isinstance(raw, dict):
            raise BadRequest("cannot load model: params file has no parameter names")
        params = {k: v for k, v in strip_prefixes(raw).items() if v is not None}
    except (ParamsFormatError, ValueError) as e:
        raise _load_error(f"params file '{p.name}'", e) from None
    return sym, params


class Runner:
    def __init__(self, name: str, version: str, block, symbol, inputs: list[IOSpec],
                 outputs: list[IOSpec], config: ModelConfig, facts: GraphFacts | None = None):
        self.name, self.version = name, version
        self.block, self.symbol = block, symbol
        # shapes, dtypes, parameters and FLOPs of the graph, per input signature, once each
        self.facts = facts or GraphFacts(symbol, [s.name for s in inputs], {})
        self.inputs, self.outputs = inputs, outputs
        self.config = config
        self.max_batch_size = config.max_batch_size
        self.input_index = {s.name: k for k, s in enumerate(inputs)}
        self.output_index = {s.name: k for k, s in enumerate(outputs)}
        self.flops_per_item: int | None = None
        self.warm = False
        self.free = 1                   # the warm-up's size for free dims beyond the batch
        self.load_seconds = 0.0
        self.optimised = False              # requests run the NumPy optimize_for twin
        self.engine = Engine()              # what requests run, and why
        self.quantization: dict = {}        # INT8 serving: agreement with float32 (int8.py)
        # the onnxruntime regions' session memory when the load was measured: sessions built
        # later for new input shapes are added to the model's memory figure
        self._sessions_at_load = 0
        self._served: CompiledModel | None = None  # what requests run, once built
        self._plain: CompiledModel | None = None   # the traced graph (inspection, reference)
        self._lock = threading.Lock()
        self._summaries: dict[tuple, dict] = {}
        self.transforms = Transforms()      # image inputs, output labels (transforms.py)

    # -- loading -------------------------------------------------------------------------------
    @classmethod
    def load(cls, name: str, version: str, files: ModelFiles, config: ModelConfig | None,
             max_nodes: int = 100_000, max_params_bytes: int | None = None,
             default_max_batch_size: int = 0, max_symbol_bytes: int = 64 << 20,
             max_json_depth: int = 64, max_tensor_elements: int = 64 << 20,
             max_activation_bytes: int = 4 << 30, optimize: bool = True, buffer_sets: int = 1,
             progress: Callable[[str], None] | None = None, engine: str = "onnxruntime",
             ort: OrtOptions | None = None) -> "Runner":
        """Parse, check, compile, optimise and warm one model version (BadRequest if it is
        unfit). `engine` "onnxruntime": serve the ONNX Runtime twin (sessions made per `ort`)
        when it reproduces the traced graph; otherwise, or with "numpy", `optimize`: serve the
        NumPy optimize_for twin when it matches the traced graph; `buffer_sets`: static buffer
        sets warmed per shape (= forwards that may run at once, so no request thread
        compiles); `progress` (optional) is told each stage, for long loads."""
        say = progress or (lambda _msg: None)
        t0 = time.perf_counter()
        sym, params = _read_files(files, max_nodes, max_params_bytes, max_symbol_bytes,
                                  max_json_depth, say)
        cfg = config or ModelConfig()
        # the model's config first, then the server's setting; bf16 alone means OpenVINO
        choice = select_engine(cfg.engine, sym, cfg.precision, default=engine)
        data_names = cls._data_names(sym, params, cfg, files.params is not None)
        say("building the block")
        try:   # from what was parsed above: neither file is read twice
            block = SymbolBlock.from_graph(sym, data_names,
                                           params if files.params is not None else None,
                                           ignore_extra=True)
            block.hybridize(static_alloc=True, static_shape=True, backend="numpy")
        except (MXNetError, ValueError, KeyError, AssertionError, TypeError) as e:
            raise _load_error("building the block", e) from None
        quantization: dict = {}
        if cfg.quantize is not None:
            say("quantizing to INT8")
            block, quantization = quantize_for_serving(name, block, cfg.quantize, files,
                                                       data_names)
        declared = {t.name: t for t in cfg.inputs}
        inputs = [IOSpec(n, declared[n].datatype,
                         tuple(declared[n].shape) if declared[n].shape is not None else None)
                  if n in declared else default_input(sym, n, params) for n in data_names]
        facts = GraphFacts(sym, data_names, {k: tuple(v.shape) for k, v in params.items()})
        outputs = cls._outputs(facts, inputs, cfg)
        effective = cls._effective_config(name, cfg, config is None, inputs, outputs,
                                          default_max_batch_size)
        warm_batch = max(cls._warm_sizes(effective))
        free = example_free(facts, inputs, warm_batch)
        warm = {s.name: concrete(s.shape, warm_batch, free) for s in inputs if s.shape is not None}
        check_inputs(warm, max_tensor_elements)
        check_activations(sym, facts.shapes(warm), max_tensor_elements, max_activation_bytes)
        r = cls(name, version, block, sym, inputs, outputs, effective, facts)
        r.free = free
        r.quantization = quantization
        r.transforms = Transforms.build(name, effective, inputs, files)
        r._warm_up(explicit=bool(cfg.inputs), optimize=optimize, buffer_sets=buffer_sets,
                   progress=say, choice=choice, ort=ort or OrtOptions())
        r.flops_per_item = r._estimate_flops()
        r.mark_measured()
        r.load_seconds = time.perf_counter() - t0
        return r

    @staticmethod
    def _data_names(sym, params: dict, cfg: ModelConfig, has_params: bool = True) -> list[str]:
        graph_inputs = sym.list_inputs()
        if cfg.inputs:
            names = [t.name for t in cfg.inputs]
            bad = [n for n in names if n not in graph_inputs]
            if bad:
                raise BadRequest(f"config declares inputs {bad} that the graph does not have; "
                                 f"graph inputs without parameters: "
                                 f"{[n for n in graph_inputs if n not in params]}")
            orphans = [n for n in graph_inputs if n not in params and n not in names]
            if orphans:
                raise BadRequest(f"graph inputs {orphans} are neither in the params file nor "
                                 "declared as inputs in the config")
            return names
        names = [n for n in graph_inputs if n not in params]
        missing = param_vars(sym, names, has_params)
        hint = ("; if some of them are data, name the data inputs in the config's 'inputs'")
        if missing and not has_params:
            raise BadRequest(f"cannot load model: no params file was given, and the graph needs "
                             f"parameters {missing[:20]}{hint}"[:1000])
        if missing:
            raise BadRequest(f"cannot load model: the params file lacks {missing[:20]}{hint}"
                             [:1000])
        if not names:
            raise BadRequest("cannot load model: the graph has no data inputs")
        return names

    @staticmethod
    def _outputs(facts: GraphFacts, inputs: list[IOSpec], cfg: ModelConfig) -> list[IOSpec]:
        names = output_names(facts.sym)
        if cfg.outputs and len(cfg.outputs) != len(names):
            raise BadRequest(f"config lists {len(cfg.outputs)} outputs but the graph has "
                             f"{len(names)}: {names}")
        if cfg.outputs:
            names = [t.name for t in cfg.outputs]
            if len(set(names)) != len(names):
                raise BadRequest(f"config has duplicate output names {names}")
        specs = infer_outputs(facts, inputs, names)
        for k, t in enumerate(cfg.outputs):
            if t.shape is not None:
                specs[k].shape = tuple(t.shape)
            specs[k].datatype = t.datatype if "datatype" in t.model_fields_set else specs[k].datatype
        return specs

    @staticmethod
    def _effective_config(name: str, cfg: ModelConfig, inferred: bool, inputs, outputs,
                          default_mbs: int = 0) -> ModelConfig:
        mbs = cfg.max_batch_size
        batchable = all(s.shape is not None and s.shape and s.shape[0] == -1 for s in inputs)
        if inferred and batchable:
            mbs = default_mbs
        if mbs > 0 and not batchable:
            raise BadRequest("max_batch_size > 0 needs every input shape to start with a free "
                             "(-1) batch dim")
        declared = {t.name: t.extras() for t in (*cfg.inputs, *cfg.outputs)}
        return cfg.model_copy(update={
            "name": name, "inputs": [s.to_spec(declared.get(s.name)) for s in inputs],
            "outputs": [s.to_spec(declared.get(s.name)) for s in outputs], "max_batch_size": mbs,
            "description": cfg.description or ("inferred from the graph" if inferred else "")})

    @staticmethod
    def _warm_sizes(cfg: ModelConfig) -> list[int]:
        sizes = [1]
        if cfg.dynamic_batching is not None:
            sizes += cfg.dynamic_batching.preferred_batch_size[:MAX_WARM_SIZES]
        return list(dict.fromkeys(sizes))

    def _warm_up(self, explicit: bool, optimize: bool = True, buffer_sets: int = 1,
                 progress: Callable[[str], None] = lambda _m: None,
                 choice: EngineChoice = EngineChoice(), ort: OrtOptions = OrtOptions()) -> None:
        self.engine = Engine(reason=choice.reason)   # until a twin is adopted
        if any(s.shape is None for s in self.inputs):
            progress("compiling (input shapes unknown: no warm-up)")
            self._blind_engine(choice)
            return
        sizes = self._warm_sizes(self.config)
        checks = [verification_inputs([(concrete(s.shape, b, self.free), s.dtype) for s in self.inputs])
                  for b in sizes]

        def warm() -> None:
            # builds the traced graph's cached op; on the first check input, so that its
            # outputs are the reference the twins are checked against (one forward less)
            first = [np.array(o) for o in self.run(checks[0])]
            if (optimize or choice.compiled) and self._plain is not None:
                progress("optimising the graph")
                self._optimise(checks, first, optimize, choice, ort)
            for k, b in enumerate(sizes):
                progress(f"warming shape {k + 1}/{len(sizes)} (batch {b})")
                arrays = self._zeros(b)
                self.run(arrays)
                if self._served is not None:
                    self._served.reserve(arrays, buffer_sets)
            self.warm = True

        _, e = attempt(warm)
        if e is not None:
            if explicit:
                raise BadRequest(f"model does not run at its declared input shapes: {e}"[:2000]) from None
            log.info("warm-up of %s/%s at inferred shapes skipped (first request compiles): %s",
                     self.name, self.version, e)
            self._blind_engine(choice)

    def _zeros(self, batch: int) -> list[np.ndarray]:
        return [np.zeros(concrete(s.shape, batch, self.free), s.dtype) for s in self.inputs]

    def _optimise(self, checks: list[list[np.ndarray]], first: list[np.ndarray], optimize: bool,
                  choice: EngineChoice, ort: OrtOptions) -> None:
        """Serve the twin of the engine `select_engine` chose (OpenVINO in its precision, then
        ONNX Runtime), else the NumPy optimize_for twin (`optimize`), whichever first
        reproduces the traced graph on `checks` (non-trivial inputs at every warm-up batch
        size; `first`: the traced graph's outputs on the first); the traced graph otherwise.
        `self.engine` says which, and why."""
        what = f"{self.name}/{self.version}"
        expected, e = attempt(lambda: [first] + [self._plain(arrays) for arrays in checks[1:]])
        if e is not None:       # no reference on this input: keep the traced graph
            log.info("%s: no optimisation (the traced graph fails on the check input: %r)", what, e)
            self.engine = Engine(reason=join(choice.reason, "the NumPy graph fails on the check "
                                             f"input: {e!r}"[:500] if choice.compiled else ""))
            return
        names = [s.name for s in self.inputs]
        asked, failed = choice.requested, ""   # failed: why the engines tried are not used
        if choice.name == OPENVINO:
            twin, got = ort_twin(self.block, self._plain, names, checks, expected, what, ort,
                                 choice)
            if twin is not None:
                self._adopt(twin, got)
                return
            failed = f"openvino not used: {got}"
            choice = select_engine(ORT, self._plain.op.symbol)
        if choice.name == ORT:
            twin, got = ort_twin(self.block, self._plain, names, checks, expected, what, ort,
                                 choice)
            if twin is not None:
                self._adopt(twin, replace(got, reason=join(failed, got.reason)))
                return
            failed = join(failed, choice.reason,
                          got if asked == ORT else f"onnxruntime not used: {got}")
        else:
            failed = join(failed, choice.reason)
            if choice.reason:
                log.warning("%s: serving NumPy: %s", what, failed)
        twin = optimised_twin(self.block, names, checks, expected, what) if optimize else None
        self.engine = Engine("numpy", "optimized" if twin is not None else "traced", failed)
        log.info("%s serves on NumPy (%s graph)%s", what, self.engine.graph,
                 f"; {failed}" if failed else "")
        if twin is not None:
            self.optimised = True
            self._adopt(twin, self.engine)

    def _adopt(self, twin: CompiledModel, engine: Engine) -> None:
        # requests of other shapes than the warm-up's (free dims beyond the batch: a model
        # uploaded without a config) get sessions specialized on them (framework/onnx/runtime.py)
        self._served, self.engine = twin, engine
        if twin.regions:
            log.info("%s/%s serves on %s (%s; %d of %d nodes in its regions)%s", self.name,
                     self.version, engine.name, ",".join(engine.providers), engine.onnx_nodes,
                     engine.nodes, f"; {engine.reason}" if engine.reason else "")
        # the traced op now only runs hooked (inspection), which plans no buffers
        self._plain.release_buffers()

    def _blind_engine(self, choice: EngineChoice) -> None:
        self.engine = Engine(reason=join(choice.reason, "no warm-up (input shapes unknown at "
                                         "load): nothing to build and check it on"
                                         if choice.compiled else ""))
        self._build_blind()

    def _build_blind(self) -> None:
        """No shapes to warm with: still compile the plan so broken graphs fail at load."""
        _, e = attempt(Plan, self.symbol, self.symbol.list_inputs())
        if e is not None:
            raise BadRequest(f"cannot compile model graph: {e}"[:2000]) from None

    def _estimate_flops(self) -> int | None:
        if any(s.shape is None for s in self.inputs):
            return None
        s = self.summary(1)
        return s["flops"] if s["flops_complete"] else None

    # -- inference -----------------------------------------------------------------------------
    def validate(self, inputs: list[InferInput]) -> tuple[list[np.ndarray], int]:
        """Request inputs → arrays in the model's input order, plus the batch size (0 = n/a)."""
        specs = self.inputs
        arrays: list = [None] * len(specs)
        for inp in inputs:
            k = self.input_index.get(inp.name)
            if k is None:
                raise BadRequest(f"unexpected inference input '{inp.name}' for model '{self.name}'"
                                 f"; expected {[s.name for s in specs]}")
            spec = specs[k]
            if inp.datatype != spec.datatype:
                raise BadRequest(f"inference input '{inp.name}' data-type is '{inp.datatype}', "
                                 f"but model '{self.name}' expects '{spec.datatype}'")
            if not self._shape_ok(spec, inp.shape):
                raise BadRequest(f"unexpected shape for input '{inp.name}' for model "
                                 f"'{self.name}'. Expected {list(spec.shape)}, got "
                                 f"{list(inp.shape)}")
            arrays[k] = inp.array
        if any(a is None for a in arrays):
            missing = [s.name for s, a in zip(specs, arrays) if a is None]
            raise BadRequest(f"expected {len(specs)} inputs but got {len(inputs)} inputs for "
                             f"model '{self.name}'; missing {missing}")
        batch = 0
        if self.max_batch_size > 0:
            sizes = {a.shape[0] for a in arrays}
            if len(sizes) != 1:
                raise BadRequest(f"inputs of model '{self.name}' disagree on the batch size: "
                                 f"{sorted(sizes)}")
            batch = sizes.pop()
            if not 1 <= batch <= self.max_batch_size:
                raise BadRequest(f"inference request batch-size must be in 1..{self.max_batch_size}"
                                 f" for '{self.name}', got {batch}")
        return arrays, batch

    @staticmethod
    def _shape_ok(spec: IOSpec, shape: tuple) -> bool:
        want = spec.shape
        if want is None:
            return True
        if spec.flatten_units and len(shape) >= 2 and len(shape) != len(want):
            return math.prod(shape[1:]) == spec.flatten_units
        if len(shape) != len(want):
            return False
        return all(w == -1 or w == d for w, d in zip(want, shape))

    def run(self, arrays: list[np.ndarray]) -> list[np.ndarray]:
        op = self._served
        if op is None:
            return self._run_block(arrays)
        return op(arrays)

    def specialized_bytes(self) -> int:
        """Memory taken since load by sessions specialized on new input shapes (measured as
        each was built; evicted ones no longer count), beyond the figure measured at load."""
        held = self._served.session_bytes() if self._served is not None else 0
        return max(0, held - self._sessions_at_load)

    def mark_measured(self) -> None:
        """End of load: the memory figure measured across it covers the sessions so far, and
        the warm-up's calls (at made-up sizes where the config leaves dims free) do not make
        its shapes hot: the first shapes real requests bring may take their places."""
        if self._served is not None:
            self._sessions_at_load = self._served.session_bytes()
            self._served.reset_shape_counts()

    def _run_block(self, arrays: list[np.ndarray]) -> list[np.ndarray]:
        """First call: the block builds its cached op (on these arrays), which is called
        directly from then on."""
        with self._lock:
            if self._served is None:
                self._plain = self._served = compile_model(self.block, arrays)
        return self._served(arrays)

    def run_hooked(self, arrays: list[np.ndarray], callback: Callable[[str, str, np.ndarray], None],
                   monitor_all: bool = False) -> list[np.ndarray]:
        """The traced graph (every node of the model, by its own name) in a separate loop with
        op hooks: the warm loop that serves requests is untouched."""
        if self._plain is None:
            self.run(arrays)
        return self._plain.run_hooked(arrays, callback, monitor_all)

    # -- descriptions --------------------------------------------------------------------------
    def metadata(self, versions: list[str]) -> dict:
        return {"name": self.name, "versions": versions, "platform": self.config.platform,
                "inputs": [s.public() for s in self.inputs],
                "outputs": [s.public() for s in self.outputs],
                # the config's own parameters (an ignored MMS handler…) beside the engine's
                "parameters": {**self.config.parameters, **self.engine.parameters(),
                               **self.quantization}}

    def triton_config(self) -> dict:
        """Triton's model-config JSON; the engine joins the config's own `parameters` (Triton's
        string form)."""
        doc = self.config.to_triton()
        doc["parameters"] = {**doc.get("parameters", {}),
                             **{k: {"string_value": str(v)}
                                for k, v in {**self.engine.parameters(),
                                             **self.quantization}.items()}}
        return doc

    def summary(self, batch: int = 1, shapes: dict[str, tuple[int, ...]] | None = None) -> dict:
        """The layer table at `batch`, inputs of `shapes` where given (else the declared
        shape; an input with free dims beyond the batch and no shape given stays unknown,
        with a warning)."""
        key = (batch, tuple(sorted((shapes or {}).items())))
        if key in self._summaries:
            return self._summaries[key]
        known, warnings = input_shapes(self.inputs, batch, shapes or {}, self.name)
        t = dict(self.facts.table(known))
        t.update({"name": self.name, "version": self.version, "batch_size": batch,
                  "warnings": warnings,
                  "inputs": [{"name": s.name, "datatype": s.datatype,
                              "shape": list(known[s.name]) if s.name in known else None}
                             for s in self.inputs],
                  "outputs": [s.public() for s in self.outputs],
                  "signature": {"inputs": [s.public() for s in self.inputs],
                                "outputs": [s.public() for s in self.outputs]}})
        if len(self._summaries) < 8:
            self._summaries[key] = t
        return t

