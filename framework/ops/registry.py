"""The operator registry: one `OpDef` per operator, found by any of its MXNet names.

An OpDef holds everything about an operator: its names (canonical, 1.x and 2.x aliases), the
attribute schema, input names and which inputs are mutated auxiliary states, output counts and
names, shape/dtype inference, the NumPy kernel, and the facts the rest of the framework needs
(element-wise, in-place safe, its 1.x form, MXNet's monitor naming, …); facts that hold for a
handful of ops are named groups beside it (groups.py, `OpGroup`).
Imperative calls, tracing, loaded graphs, summaries, op hooks and every graph pass read this
table; nothing implements an operator, or lists operators by name, anywhere else.

Kernel convention: `kernel(attrs, *inputs)` takes parsed `Attrs` and NumPy arrays and returns one
array or a tuple of arrays (one per output, hidden outputs included). A kernel declared with
`out=True` also accepts `out=` (a preallocated array for output 0) and must write into it.
"""
from __future__ import annotations

import difflib
import functools
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as _np

from ..base import GraphFormatError, OperatorError, ShapeError
from .attrs import Attr, Attrs, format_value, parse_attrs

Shape = tuple
ShapeFn = Callable[[Attrs, list], list]


class DataDependentShape(ShapeError):
    """An op's output shapes depend on its input values: shape inference leaves them unknown."""


@dataclass(eq=False)
class OpDef:
    name: str
    kernel: Callable[..., Any]
    aliases: tuple[str, ...] = ()
    attrs: dict[str, Attr] = field(default_factory=dict)
    # input names, or a function of the parsed attrs (variadic ops, optional bias)
    inputs: Sequence[str] | Callable[[Attrs], Sequence[str]] = ("data",)
    # input positions the op mutates (aux states), or a function of the parsed attrs
    aux: tuple[int, ...] | Callable[[Attrs], tuple[int, ...]] = ()
    num_outputs: int | Callable[[Attrs], int] = 1  # all outputs, hidden ones included
    num_visible: int | Callable[[Attrs], int] | None = None
    output_names: Sequence[str] | None = None      # BatchNorm: output, mean, var
    infer_shape: ShapeFn | None = None             # (attrs, in_shapes) -> out_shapes
    # the output shapes depend on the input *values* (unique, nonzero, boolean_mask…), or a
    # function of the attrs saying when (delete by an index tensor, not by a slice): shape
    # inference then leaves the outputs unknown. Every other op must have an `infer_shape`.
    shape_depends_on_data: bool | Callable[[Attrs], bool] = False
    # (attrs, in_dtypes) -> out_dtypes; None: every output has input 0's dtype (float32 without
    # inputs). tests/ops/test_registry_shapes.py checks either against the kernel
    infer_type: Callable[[Attrs, list], list] | None = None
    # MXNet computes it for floating-point data only (its REAL type switch): integer or bool
    # data (input 0) is an OperatorError, from the kernel and from dtype inference alike
    float_only: bool = False
    # (attrs, input names) -> the dtype the op gives each input when it is unknown, or None
    # (MXNet's FInferType fills inputs too: quantized ops' float32 ranges, int8 FC weights)
    input_dtypes: Callable[[Attrs, list], list] | None = None
    # (attrs, in_shapes) -> in_shapes with unknown parameter shapes filled in (weights of FC, conv…)
    infer_param_shapes: ShapeFn | None = None
    strict: bool = False                           # unknown (non-dunder) attr names are errors
    out: bool = False                              # kernel accepts out=
    flops: Callable[[Attrs, list, list], int] | None = None
    # its ONNX lowering (ops.lowering.OnnxLowering, set by `@lowers` at the end of
    # the op's module), or None where ONNX cannot express the op
    onnx: Any = None
    # (parsed attrs, node.subgraphs) -> None: the op's configuration lives in its node's
    # subgraph (MXNet's fused `_sg_mkldnn_*` nodes); fills the parsed attrs from it
    subgraph_attrs: Callable[[Attrs, list], None] | None = None
    doc: str = ""
    # -- facts the graph passes read: each pass asks the op (or, for facts of a handful of ops,
    # its named group in ops/groups.py); no pass keeps a list of op names ---------------------
    # output i is a function of element i of each input (same shape): any layout will do
    elementwise: bool | Callable[[Attrs], bool] = False
    # the out= kernel computes in one pass that may alias input 0 (same shape and dtype)
    inplace: bool | Callable[[Attrs], bool] = False
    random: bool = False                 # draws random numbers: never folded into a constant
    # (data, parameter) inputs that must share a dtype (MXNet's type inference refuses a mix)
    dtype_pair: tuple[str, str] | None = None
    # the activation epilogue a fused GEMM computes for this op: (act_type, a_min, a_max) or None
    epilogue: Callable[[Attrs], tuple | None] | None = None
    with_act: str | None = None          # the op computing this one followed by an activation
    # MXNet's monitor names: `input<j>` without FListInputNames, `<i>` without FListOutputNames
    monitor_indexed_inputs: bool = False
    monitor_indexed_outputs: bool = False
    # the Gluon layer that emits it, as a name stem for its nodes (`dense` → dense0, dense1…),
    # or a function of the attrs (Activation: its act_type); None: the canonical name
    layer: str | Callable[[Attrs], str] | None = None
    profiler_scope: bool = False         # MXNet 2.0 invokes it the legacy way: tags the node
    # MXNet 1.x form for the 1.x writer: a 1.9.1 operator name, or a translator
    # `(node, attrs, shape_of) -> (name, attrs)` (ops/legacy_forms.py)
    legacy: str | Callable | None = None
    # (attrs, weight shape) -> (data shape with -1 for free dims, flattened units) or None:
    # what the op's weight says of its data input (a served model's default signature)
    data_shape: Callable[[Attrs, tuple], tuple | None] | None = None
    # computes on 8-bit levels (MXNet's INT8 ops): two engines may round a level apart
    quantized: bool | Callable[[Attrs], bool] = False
    # (file version, raw attrs) -> None: rewrites what an older MXNet JSON meant (symbol/json_io.py)
    upgrade: Callable[[int, dict], None] | None = None
    # MXNet's FQuantizedOp: the INT8 operator that stands for this one in a quantized graph
    # (contrib.quantization), or a function of the attrs giving it (None: stays float there)
    quantized_as: str | Callable[[Attrs], str | None] | None = None
    # MXNet 2.x's name where 2.x dropped the 1.x one (DeformableConvolution): 2.x files use it
    mx2_name: str | None = None

    # -- attributes ---------------------------------------------------------------------------
    def parse_attrs(self, raw: dict[str, Any], node: str | None = None) -> Attrs:
        return parse_attrs(self.name, self.attrs, raw, self.strict, node)

    def format_attrs(self, parsed: dict[str, Any]) -> dict[str, str]:
        """String attrs as MXNet 2.x writes them (schema keys only, sorted)."""
        return {k: format_value(parsed[k]) for k in sorted(parsed)
                if k in self.attrs or not isinstance(parsed[k], (dict, list))}

    # -- structure ----------------------------------------------------------------------------
    def input_names(self, a: Attrs) -> list[str]:
        return list(self.inputs(a) if callable(self.inputs) else self.inputs)

    def aux_of(self, a: Attrs) -> tuple[int, ...]:
        return tuple(self.aux(a)) if callable(self.aux) else self.aux

    def n_outputs(self, a: Attrs) -> int:
        return self.num_outputs(a) if callable(self.num_outputs) else self.num_outputs

    def n_visible(self, a: Attrs) -> int:
        v = self.num_visible
        if v is None:
            return self.n_outputs(a)
        return v(a) if callable(v) else v

    def layer_stem(self, a: Attrs) -> str:
        """A readable stem for naming this op's nodes: its Gluon layer, else the canonical name
        without MXNet's `_npx_`/`_npi_` style prefixes."""
        if self.layer is not None:
            return self.layer(a) if callable(self.layer) else self.layer
        return self.name.lstrip("_").removeprefix("npx_").removeprefix("npi_").lower()

    def output_name(self, a: Attrs, i: int) -> str:
        if self.output_names is not None:
            return self.output_names[i]
        return "output" if self.n_outputs(a) == 1 else f"output{i}"

    # -- facts ---------------------------------------------------------------------------------
    def is_elementwise(self, a: Attrs) -> bool:
        e = self.elementwise
        return e(a) if callable(e) else e

    def is_quantized(self, a: Attrs) -> bool:
        e = self.quantized
        return e(a) if callable(e) else e

    def is_inplace(self, a: Attrs) -> bool:
        e = self.inplace
        return e(a) if callable(e) else e

    # -- inference ----------------------------------------------------------------------------
    def depends_on_data(self, a: Attrs) -> bool:
        d = self.shape_depends_on_data
        return d(a) if callable(d) else d

    def shapes(self, a: Attrs, in_shapes: list[Shape]) -> list[Shape]:
        """Output shapes from the op's `infer_shape`; `DataDependentShape` when they depend on
        the input values (never a guess: no kernel is run)."""
        if self.depends_on_data(a):
            raise DataDependentShape(f"operator {self.name}: output shapes depend on the input "
                                     f"values, not only on the input shapes {list(in_shapes)}")
        if self.infer_shape is None:   # tests/ops/test_registry_shapes.py lets no op get here
            raise ShapeError(f"operator {self.name} has no shape rule (infer_shape)")
        return [tuple(s) for s in self.infer_shape(a, list(in_shapes))]

    def check_float(self, dtype) -> None:
        """OperatorError when a `float_only` op is given integer or bool data."""
        if self.float_only and dtype is not None and _np.dtype(dtype).kind not in "fc":
            raise OperatorError(f"operator {self.name}: takes floating-point data only, "
                                f"got {_np.dtype(dtype).name} (as MXNet)")

    def dtypes(self, a: Attrs, in_dtypes: list) -> list:
        if in_dtypes:
            self.check_float(in_dtypes[0])
        if self.infer_type is not None:
            return list(self.infer_type(a, list(in_dtypes)))
        first = in_dtypes[0] if in_dtypes else _np.dtype(_np.float32)
        return [first] * self.n_outputs(a)


_OPS: dict[str, OpDef] = {}


def register(name: str, *aliases: str, **kw) -> Callable[[Callable], OpDef]:
    """Decorator: `@register('FullyConnected', '_npx_fully_connected', attrs={...})` on a kernel."""

    # MXNet's numpy ops and tensor-scalar ops have no monitor name lists
    kw.setdefault("monitor_indexed_outputs", name.startswith("_np") or name.endswith("_scalar"))
    kw.setdefault("monitor_indexed_inputs", name.endswith("_scalar"))

    def deco(kernel: Callable) -> OpDef:
        if kw.get("float_only"):
            kernel = _refusing_integers(name, kernel)
        op = OpDef(name=name, kernel=kernel, aliases=tuple(aliases), doc=kernel.__doc__ or "", **kw)
        for n in (name, *aliases):
            if n in _OPS:
                raise RuntimeError(f"operator name {n!r} registered twice")
            _OPS[n] = op
        return op

    return deco


def _refusing_integers(name: str, kernel: Callable) -> Callable:
    """The kernel of a `float_only` op: integer or bool data raises before any arithmetic."""
    @functools.wraps(kernel)
    def run(a, *inputs, **kw):
        if inputs and _np.asarray(inputs[0]).dtype.kind not in "fc":
            _OPS[name].check_float(_np.asarray(inputs[0]).dtype)
        return kernel(a, *inputs, **kw)

    return run


def alias(op: OpDef, *names: str) -> None:
    for n in names:
        if n in _OPS:
            raise RuntimeError(f"operator name {n!r} registered twice")
        _OPS[n] = op
    op.aliases = op.aliases + tuple(names)


def has_op(name: str) -> bool:
    _ensure_loaded()
    return name in _OPS


def get_op(name: str, node: str | None = None) -> OpDef:
    """Look an operator up by any MXNet name; an unknown name lists the nearest supported ones."""
    _ensure_loaded()
    op = _OPS.get(name)
    if op is None:
        near = difflib.get_close_matches(name, list(_OPS), n=5, cutoff=0.5)
        where = f" (node '{node}')" if node is not None else ""
        hint = f"; nearest supported: {', '.join(near)}" if near else ""
        raise GraphFormatError(f"Operator {name}{where} is not supported by hybridserve{hint}")
    return op


def all_ops() -> dict[str, OpDef]:
    """Every registered name → OpDef (aliases included)."""
    _ensure_loaded()
    return dict(_OPS)


def unique_ops() -> list[OpDef]:
    _ensure_loaded()
    seen: dict[int, OpDef] = {}
    for op in _OPS.values():
        seen.setdefault(id(op), op)
    return list(seen.values())


_loaded = False
_loading = False
_load_lock = threading.RLock()


def _ensure_loaded() -> None:
    """Import every op family once. Thread-safe: a thread that looks an op up while another
    fills the table waits for the whole table (servers load models from several threads). The
    families are imported here, not at module level, because they import this module."""
    global _loaded, _loading
    if _loaded:
        return
    with _load_lock:               # re-entrant: a family module looking ops up while importing
        if _loaded or _loading:    # sees the table as filled so far, and does not end the load
            return
        _loading = True
        try:
            from . import catalog  # noqa: F401  (imports every op family module)
        finally:
            _loading = False
        _loaded = True


# -- front-ends ---------------------------------------------------------------------------------
# The Python front-ends reach operators by the names they expose them under (`np.tril`,
# `npx.relu`, `np.linalg.inv`), declared by each op family next to its entries, so that no
# front-end spells an internal op name (MXNet's register.py derived them from op-name prefixes).
# A spec is `<namespace>.<function>[:<role>][(<signature>)]`:
# - a role names one of several ops a front-end function chooses among by its arguments
#   (`np.add:binary` two arrays, `np.add:scalar` array∘number, `np.add:rscalar` number∘array)
#   and tells the front-end which wrapper to build it with;
# - a signature lets the front-end generate the function: parameters without a default are the
#   op's inputs, in order, the others its attributes with their defaults (`np.tril(m, k=0)`);
#   `**kwargs` accepts and ignores other keywords.
_FRONT: dict[str, tuple[str, str | None]] = {}    # "np.add:scalar" -> (op name, signature)
_PREFIXED = {"npx": "_npx_"}    # MXNet's rule for names no family declares: `_npx_foo` is npx.foo


def expose(opname: str, *specs: str) -> None:
    """Declare the front-end names (specs as above) operator `opname` is exposed under."""
    for spec in specs:
        name, _, sig = spec.partition("(")
        if name in _FRONT:
            raise RuntimeError(f"front-end name {name!r} exposed twice")
        _FRONT[name] = (opname, sig[:-1] if sig else None)


def find_front(name: str) -> OpDef | None:
    """The operator exposed as `name` (`np.add:scalar`, `npx.relu`), or None."""
    _ensure_loaded()
    hit = _FRONT.get(name)
    if hit is not None:
        return get_op(hit[0])
    ns, _, fn = name.rpartition(".")
    prefixed = f"{_PREFIXED[ns]}{fn}" if ns in _PREFIXED else None
    return _OPS.get(prefixed) if prefixed else None


def front_op(name: str) -> OpDef:
    """The operator behind front-end name `name`: the handle a hand-written wrapper calls."""
    op = find_front(name)
    if op is None:
        raise KeyError(f"no operator is exposed as {name!r}")
    return op


def front_ends(namespace: str, role: str = "") -> dict[str, tuple[OpDef, str | None]]:
    """`{function: (op, signature)}` for the names exposed in `namespace` (`np`, `np.linalg`)
    with `role` ("" for none)."""
    _ensure_loaded()
    out = {}
    for name, (opname, sig) in _FRONT.items():
        qual, _, r = name.partition(":")
        ns, _, fn = qual.rpartition(".")
        if ns == namespace and r == role:
            out[fn] = (get_op(opname), sig)
    return out
