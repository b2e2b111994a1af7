"""HybridBlock: imperative until `hybridize()`, then traced once into a graph and run as a cached op.

Dispatch follows MXNet 2 exactly: not hybridized → imperative `forward`; called inside an outer
trace → `forward` inline (recorded into the outer graph); top level → the cached op.
"""
from __future__ import annotations

import enum
import inspect
import threading
import warnings
from typing import Any

from ..base import DeferredInitializationError
from ..compiler.backends import get_backend
from ..compiler.cached_op import CachedOp
from ..compiler.engine import EngineChoice, select_engine
from ..ndarray import ndarray
from ..symbol import trace as _trace
from ..symbol.graph import Symbol, _Symbol
from ..symbol.infer import infer_shape, infer_type
from ..symbol.legacy_export import export_legacy
from ._op_hook import wrap_callback
from .block import Block
from .export import export
from .nested import flatten, format_matches, regroup
from .parameter import Parameter, _known

# one re-entrant lock for the rare slow paths (first call, graph capture, cache build): the
# steady state of a hybridized block takes no lock
_BUILD_LOCK = threading.RLock()
_DEACTIVATE = "Currently the model has been hybridized. Automatically deactivate the hybridization"


class HybridBlock(Block):
    """A Block that can be traced into a symbolic graph and compiled (`hybridize`)."""

    class OptConstraint:
        class Flag(enum.Flag):
            DisableAMP = enum.auto()

        def __init__(self, flag):
            self.flag = flag
            self._saved = 0

        def __enter__(self):
            self._saved = _trace.get_optimization_constraints()
            _trace.set_optimization_constraints(self._saved | self.flag.value)
            return self

        def __exit__(self, *exc):
            _trace.set_optimization_constraints(self._saved)

        @staticmethod
        def get_flags() -> int:
            return _trace.get_optimization_constraints()

        @classmethod
        def disable_all(cls):
            """MXNet's master computes the flags but returns None (its bug); we return a constraint."""
            flags = HybridBlock.OptConstraint.Flag(0)
            for f in HybridBlock.OptConstraint.Flag:
                flags |= f
            return cls(flags)

        @classmethod
        def disable_amp(cls):
            return cls(HybridBlock.OptConstraint.Flag.DisableAMP)

    _fast = None     # bound fast call path (see _bind_fast_path)

    def __init__(self):
        super().__init__()
        assert not hasattr(self, "hybrid_forward"), (
            "'forward' instead of 'hybrid_forward' interface needs to be used starting from "
            "Gluon2.0.Please follow MXNet2.0 Migration Guide to use new APIs.")
        self._cached_graph: tuple = ()
        self._cached_op: CachedOp | None = None
        self._cached_op_args: list[tuple] = []
        self._out_format = None
        self._in_format = None
        self._called_infer_shape_already = False
        self._active = False
        self._flags: list[tuple[str, Any]] = []
        self._callback = None
        self._monitor_all = False
        self._backend = None
        self._backend_opts: dict = {}
        self._engine: str | None = None       # hybridize(backend=...): None = the default
        self._engine_choice = EngineChoice()  # what select_engine decided for the cached op
        self._partition_if_dynamic = True
        self._first_forward = True

    # -- children -----------------------------------------------------------------------------
    def __setattr__(self, name: str, value: Any) -> None:
        super().__setattr__(name, value)
        if isinstance(value, HybridBlock):
            if getattr(self, "_active", False):
                warnings.warn(_DEACTIVATE + " " * 32 + "when changing the children blocks.",
                              stacklevel=2)
                self._active = False
            self._clear_cached_op()

    def register_child(self, block: Block, name: str | None = None) -> None:
        if not isinstance(block, HybridBlock):
            raise ValueError(
                f"Children of HybridBlock must also be HybridBlock, but {str(block)} has type "
                f"{str(type(block))}. If you are using Sequential, please try HybridSequential instead.")
        super().register_child(block, name)
        if getattr(self, "_active", False):
            warnings.warn(_DEACTIVATE + " " * 28 + "when adding new children block.", stacklevel=3)
            self._active = False
        self._clear_cached_op()

    def _params_reloaded(self) -> None:
        """After load_dict/load_parameters: a graph the default engine compiled with the old
        parameter values recompiles on the next call (the traced graph stays)."""
        if self.__dict__.pop("_engine_compiled", False):
            self._cached_op = None
            self.__dict__["_fast"] = None

    def _clear_cached_op(self) -> None:
        if hasattr(self, "_cached_op"):
            self._cached_graph = ()
            self._cached_op = None
            self._first_forward = True
        self.__dict__["_fast"] = None

    # -- hybridize ----------------------------------------------------------------------------
    # no annotations: `inspect.signature(HybridBlock.hybridize)` must print as MXNet's does
    def hybridize(self, active=True, partition_if_dynamic=True, static_alloc=False,
                  static_shape=False, inline_limit=2, forward_bulk_size=None,
                  backward_bulk_size=None, *, backend=None):
        """Activate (or deactivate) graph capture for this block and its children.

        active: bool; partition_if_dynamic: bool (not propagated to children, as in MXNet);
        static_alloc / static_shape: bool; inline_limit: int; *_bulk_size: int or None.
        backend (keyword, MXNet 1.x's argument): the engine the graph compiles onto at its
        first call — None: the default engine (ONNX Runtime when installed, unless
        HYBRIDSERVE_ENGINE=numpy or MXNET_SUBGRAPH_BACKEND=NONE; compiler/engine.py),
        'numpy': the NumPy reference kernels, or any optimize_for backend's name.
        """
        self._active = active
        self._engine = backend
        self._partition_if_dynamic = partition_if_dynamic
        self._flags = [("static_alloc", static_alloc), ("static_shape", static_shape),
                       ("inline_limit", inline_limit)]
        if forward_bulk_size is not None:
            self._flags.append(("forward_bulk_size", forward_bulk_size))
        if backward_bulk_size is not None:
            self._flags.append(("backward_bulk_size", backward_bulk_size))
        self._clear_cached_op()
        # MXNet's precedence: pre-hooks warn even with active=False
        if (active and self._forward_hooks) or self._forward_pre_hooks:
            warnings.warn(f'"{repr(self)}" is being hybridized while still having forward hook/'
                          f'pre-hook. If "{repr(self)}" is a child of HybridBlock, the hooks will '
                          "not take effect.", stacklevel=2)
        super().hybridize(active, static_alloc=static_alloc, static_shape=static_shape,
                          inline_limit=inline_limit, forward_bulk_size=forward_bulk_size,
                          backward_bulk_size=backward_bulk_size, backend=backend)

    def cast(self, dtype) -> None:
        if self._active:
            warnings.warn(_DEACTIVATE + " " * 28 + "when cast the block to use another data type.",
                          stacklevel=2)
            self._active = False
        self._clear_cached_op()
        super().cast(dtype)

    # -- shape / type inference hooks ---------------------------------------------------------
    def infer_shape(self, *args) -> None:
        unknown = [p for p in self._reg_params.values() if not _known(p.shape)]
        if unknown:
            name = self.__class__.__name__
            raise RuntimeError(
                f"{name} has parameters with unknown shape. You need to either specify the shape "
                f"in __init__ or implement {name}.infer_shape to set the parameter shapes based "
                "on the first input. Parameters with unknown shapes are "
                + ", ".join(f"{p.name} ({p.shape})" for p in unknown))

    def infer_type(self, *args) -> None:
        """Set parameter dtypes from the input dtypes by type inference over the graph."""
        self._infer_attrs("dtype", *args)

    def _infer_attrs(self, attr: str, *args) -> None:
        """Graph-based inference of `shape` or `dtype` for every collected Parameter."""
        inputs, out = self._get_graph(*args)
        real = [a for a in flatten(args, "input")[0] if a is not None]
        known = {s.name: getattr(a, attr) for s, a in zip(inputs, real)}
        found = (infer_shape if attr == "shape" else infer_type)(out, _as_dict=True, **known)
        for p in self.collect_params().values():
            value = found.get(p.var_name())
            if value is not None:
                setattr(p, attr, value)

    # -- calling ------------------------------------------------------------------------------
    def __call__(self, x, *args):
        fast = self._fast
        if fast is not None and not args and x.__class__ is ndarray and _trace.current() is None:
            return fast(x)
        _check_inputs([x, *args])
        if not _has_ndarray([x, *args]):
            raise ValueError("In HybridBlock, there must be one NDArray in the input. "
                             "Please check the type of the args.\n")
        if not self._called_infer_shape_already:
            with _BUILD_LOCK:           # concurrent first calls must initialise only once
                if not self._called_infer_shape_already:
                    self.infer_shape(x, *args)
                    for p in self._reg_params.values():
                        p._finish_deferred_init()
                    self._called_infer_shape_already = True
        if not self._active or _trace.is_deferred_compute():
            # imperative, or a child inlined into an outer capture
            return super().__call__(x, *args)
        return self._call_cached_op(x, *args)

    def forward(self, x, *args):
        raise NotImplementedError

    # -- graph capture and the cached op -----------------------------------------------------
    def _get_graph(self, *args):
        if not self._cached_graph:
            flat, self._in_format = flatten(args, "input")
            real = [a for a in flat if a is not None]
            if not real:
                raise ValueError("All args are None and we do not support such a case. "
                                 f"Received args={args}")
            names = self.generate_arg_names(len(real))
            tracer = _trace.Tracer()
            # fresh handles: the same array passed twice still becomes two inputs
            fresh = [None if a is None else ndarray(a._data) for a in flat]
            attrs = {"__profiler_scope__": _trace.PROFILER_SCOPE}
            in_syms = [_Symbol([tracer.bind_var(a, name, attrs)])
                       for a, name in zip([a for a in fresh if a is not None], names)]
            targs = regroup(fresh, self._in_format)[0]
            with _trace.tracing(tracer):
                out = Block.__call__(self, *targs)
            flat_out, self._out_format = flatten(out, "output")
            self._cached_graph = (in_syms, tracer.symbol(flat_out))
            self._traced_shapes = {n: a.shape for n, a in zip(names, [a for a in fresh if a is not None])}
        return self._cached_graph

    def _build_cache(self, *args, update_graph: bool = True) -> None:
        in_syms, out = self._get_graph(*args)
        data_names = {s.name: i for i, s in enumerate(in_syms)}
        collected = self.collect_params()
        params = {p.var_name(): p for p in collected.values()}
        serial = {p.var_name(): n for n, p in collected.items()}      # last name wins
        input_names = out.list_inputs()
        for name in input_names:
            assert name in params or name in data_names, f"Unknown input to HybridBlock: {name}"
        used = set(input_names)
        unused = [f"{i}-th" for name, i in data_names.items() if name not in used]
        if unused:
            warnings.warn(f"The {', '.join(unused)} input to HybridBlock is not used by any "
                          "computation. Is this intended?", stacklevel=4)
        unused_p = [n for n in params if n not in used]
        if unused_p:
            warnings.warn(f"Parameter {', '.join(unused_p)} is not used by any computation. "
                          "Is this intended?", stacklevel=4)
        flat, _ = flatten(args, "input")
        self._deferred_infer(flat, [params[n] for n in input_names if n in params])
        backend, default = self._backend, not self._backend
        if default:
            # a plain hybridize() compiles onto the default engine; the traced graph stays the
            # block's graph (export, summary and op hooks see it)
            choice = select_engine(self._engine, out, fallback=self._engine is None)
            backend, update_graph = choice.backend, False
        else:       # optimize_for: `numpy` (MXNet's NONE) is the reference, as for hybridize
            choice = self._explicit_engine(backend)
            backend = choice.backend
        if backend:
            shapes = {n: tuple(flat[i].shape) for n, i in data_names.items()
                      if i < len(flat) and hasattr(flat[i], "shape")}
            # the traced inputs include what the block itself adds (an RNN layer's states)
            shapes.update(getattr(self, "_traced_shapes", None) or {})
            # the default engine may bake parameter values into what it compiles (folded
            # BatchNorm, ONNX Runtime initializers): reloaded parameters recompile it
            self.__dict__["_engine_compiled"] = default
            # the engines build typed sessions: an int8 input must not be taken for float32
            dtypes = {n: flat[i].dtype for n, i in data_names.items()
                      if i < len(flat) and hasattr(flat[i], "dtype")}
            try:
                out, params, serial = self._apply_backend(out, params, serial, shapes, backend,
                                                          dtypes)
            except Exception as e:  # noqa: BLE001 - the default engine is a speed-up only
                if not default or self._engine is not None:
                    raise
                warnings.warn(f"{type(self).__name__}: the {backend} engine cannot compile "
                              f"this graph ({type(e).__name__}: {e}); it runs on NumPy",
                              stacklevel=4)
                choice = EngineChoice(reason=f"the {backend} engine cannot compile this "
                                      f"graph ({type(e).__name__}: {e})")
            if update_graph:
                self._cached_graph = (in_syms, out)
            input_names = out.list_inputs()
        self._cached_op_args = [(True, n, data_names[n]) if n in data_names
                                else (False, serial[n], params[n]) for n in input_names]
        self._flags = [("data_indices", [i for i, t in enumerate(self._cached_op_args) if t[0]]),
                       ("param_indices", [i for i, t in enumerate(self._cached_op_args) if not t[0]])] \
            + [f for f in self._flags if f[0] not in ("data_indices", "param_indices")]
        self._cached_op = CachedOp(out, input_names, dict(self._flags))
        self._engine_choice = choice

    def _explicit_engine(self, backend: str) -> EngineChoice:
        """optimize_for(backend=...): the backend stands (it raises what it lacks); an
        engine with precisions says which one it computes in."""
        precision = self._backend_opts.get("precision")
        return select_engine(backend, precision=precision if precision in ("f32", "bf16")
                             else None, fallback=False)

    @property
    def engine_choice(self) -> EngineChoice | None:
        """The engine the cached op runs on, its precision and why (None before the first
        call builds it)."""
        return self._engine_choice if self._cached_op is not None else None

    def _apply_backend(self, out: Symbol, params: dict, serial: dict,
                       data_shapes: dict | None = None, backend: str | None = None,
                       data_dtypes: dict | None = None):
        """Run the `optimize_for` backend on the graph and the parameter values; parameters the
        backend invents become new Parameters named like their graph variable (exported too).
        The backend also gets the example inputs' shapes (`data_shapes`), to pick kernels, and
        their dtypes (`data_dtypes`) when it takes that option or any keyword."""
        used = set(out.list_inputs())
        aux = set(out.list_auxiliary_states())
        values = {n: p.data()._data for n, p in params.items() if n in used}
        fn = get_backend(backend or self._backend)
        extra = {"data_shapes": data_shapes or {}}
        if data_dtypes and _takes_option(fn, "data_dtypes"):
            extra["data_dtypes"] = data_dtypes
        new_sym, args, auxs = fn(
            out, {k: v for k, v in values.items() if k not in aux},
            {k: v for k, v in values.items() if k in aux}, **{**extra, **self._backend_opts})
        params, serial = dict(params), dict(serial)
        for name, value in {**args, **auxs}.items():
            if name in params and params[name].data()._data is value:
                continue
            p = Parameter(name, grad_req="null", shape=value.shape, dtype=value.dtype)
            p._var_name = name
            p._load_init(value, None)
            params[name], serial[name] = p, name
        for name in new_sym.list_inputs():
            if name not in params and not name.startswith("data"):
                raise RuntimeError("A parameter was added to the graph during optimization but it "
                                   "was not added to the parameter dicts.\nPlease check the backend.")
        return new_sym, params, serial

    def _deferred_infer(self, flat_args, params: list[Parameter]) -> None:
        try:
            for p in params:
                p.data()
        except DeferredInitializationError:
            try:
                self.infer_shape(*flat_args)
            except Exception as e:
                raise ValueError("Deferred initialization failed because shape cannot be "
                                 f"inferred. {e}") from e
            for p in params:
                p._finish_deferred_init()

    def _call_cached_op(self, *args):
        if self._cached_op is None:
            with _BUILD_LOCK:
                if self._cached_op is None:
                    self._build_cache(*args)
        assert self._cached_op, ("Gluon failed to build the cache. This should never happen. "
                                 "Please submit an issue on Github "
                                 "https://github.com/apache/incubator-mxnet.")
        if self._callback is not None:
            # MXNet tests truthy flag tuples, so the warning shows on every hooked call
            warnings.warn("register_op_hook is experimental when static_alloc=True / "
                          "static_shape=True  and may not work correctly", stacklevel=3)
        flat, fmt = flatten(args, "input")
        if not format_matches(fmt, self._in_format):
            # MXNet's message swaps the two labels
            raise ValueError("The argument structure of HybridBlock does not match the cached "
                             f"version. Stored format = {fmt}, input format = {self._in_format}")
        real = [a for a in flat if a is not None]
        inputs = [real[v]._data if is_data else v.data()._data
                  for is_data, _, v in self._cached_op_args]
        if self._callback is not None:
            cb = wrap_callback(self._callback, self._cached_op.plan.steps)
            outs = self._cached_op.run_hooked(inputs, cb, self._monitor_all)
        else:
            outs = self._cached_op(inputs)
            if self._fast is None and self._in_format == [0] and self._out_format == 0:
                self.__dict__["_fast"] = self._bind_fast_path()
        return regroup([ndarray(o) for o in outs], self._out_format)[0]

    def _bind_fast_path(self):
        """One array in, one array out, no hooks: skip flattening and format checks per call.

        Parameters are read at call time (`set_data`/`load_parameters` keep working); anything
        unexpected drops back to the general path, which raises with full context."""
        op, spec = self._cached_op, self._cached_op_args
        params = [None if is_data else p for is_data, _, p in spec]

        def fast(x):
            try:
                inputs = [x._data if p is None else p._data[0]._data for p in params]
            except (TypeError, AttributeError):
                self.__dict__["_fast"] = None
                return self(x)
            return ndarray(op(inputs)[0])
        return fast

    def compiled(self):
        """(cached op, input spec) for callers that run the compiled graph on NumPy arrays
        directly (the server): spec entries are `(True, name, data_position)` or
        `(False, structural_name, Parameter)` in the cached op's input order."""
        if self._cached_op is None:
            raise RuntimeError("call the hybridized block once before asking for its cached op")
        return self._cached_op, list(self._cached_op_args)

    # -- export / optimisation / hooks ----------------------------------------------------------
    def export(self, path: str | None, epoch: int = 0, remove_amp_cast: bool = True,
               format: str = "2.x"):
        """Write `path-symbol.json` + `path-EEEE.params` (or return them for path=None).

        `format='1.x'` (a hybridserve extension) writes files real MXNet 1.x can load;
        `format='onnx'` writes `path.onnx`, a standard ONNX model (opset 18) of the whole graph
        (inputs named as the data inputs, leading axis dynamic, parameters as initializers)
        and returns its path; it needs the `onnx` package."""
        if format == "onnx":
            if path is None:
                raise ValueError("export(format='onnx') needs a path")
            from ..onnx.export import export_block
            return export_block(self, path, epoch, remove_amp_cast)
        if format == "1.x":
            return export_legacy(self, path, epoch, remove_amp_cast,
                                 input_shapes=getattr(self, "_traced_shapes", None))
        if format != "2.x":
            raise ValueError(f"export format must be '2.x', '1.x' or 'onnx', got {format!r}")
        return export(self, path, epoch, remove_amp_cast)

    def optimize_for(self, x, *args, backend: str | None = None, clear: bool = False,
                     partition_if_dynamic: bool = True, static_alloc: bool = False,
                     static_shape: bool = False, inline_limit: int = 2,
                     forward_bulk_size: int | None = None, backward_bulk_size: int | None = None,
                     **kwargs) -> None:
        self._backend = backend
        if kwargs:
            self._backend_opts = kwargs
        if clear or not self._active:
            self.hybridize(True, partition_if_dynamic, static_alloc, static_shape, inline_limit,
                           forward_bulk_size, backward_bulk_size)
        flat, _ = flatten([x, *args], "input")
        if not any(isinstance(a, (ndarray, Symbol)) for a in flat):
            raise ValueError("In HybridBlock, there must be one NDArray or one Symbol in the input."
                             " Please check the type of the args.\n")
        if not self._called_infer_shape_already:
            self.infer_shape(x, *args)
            for p in self._reg_params.values():
                p._finish_deferred_init()
            self._called_infer_shape_already = True
        self._build_cache(x, *args)
        assert self._cached_op, "Gluon failed to build the cache. This should never happen."
        self.__dict__["_fast"] = None       # it was bound to the previous cached op
        self._first_forward = True
        self._backend = None
        self._backend_opts = {}

    def register_op_hook(self, callback, monitor_all: bool = False) -> None:
        self.__dict__["_fast"] = None
        self._callback = callback
        self._monitor_all = monitor_all
        for _, child in self._child_items():
            child._callback = callback
            child._monitor_all = monitor_all

    def reset_device(self, device) -> None:
        for p in self.collect_params().values():
            p.reset_device(device)

    def reset_ctx(self, ctx) -> None:
        warnings.warn("HybridBlock.reset_ctx has been renamed to HybridBlock.reset_device",
                      DeprecationWarning, stacklevel=2)
        self.reset_device(ctx)

    @staticmethod
    def generate_arg_names(num: int) -> list[str]:
        return ["data"] if num == 1 else [f"data{i}" for i in range(num)]


def _takes_option(fn, name: str) -> bool:
    try:
        ps = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.name == name or p.kind is p.VAR_KEYWORD for p in ps)


def _check_inputs(inputs) -> None:
    """MXNet rejects legacy arrays and symbols (any Symbol here) anywhere in the inputs."""
    if isinstance(inputs, Symbol):
        raise TypeError("Block's inputs must be of type `mxnet.numpy.ndarray`, while got output "
                        f"type {type(inputs)}")
    if isinstance(inputs, (list, tuple)):
        for i in inputs:
            _check_inputs(i)


def _has_ndarray(inputs) -> bool:
    if isinstance(inputs, ndarray):
        return True
    if isinstance(inputs, (list, tuple)):
        return any(_has_ndarray(i) for i in inputs)
    return False
