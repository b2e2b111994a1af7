"""The lowering context: fresh names, constants as initializers, node emission, value shapes."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from .deps import require
from ..ops.lowering import Unsupported

DEFAULT_OPSET = 18       # uniform Reduce* (axes as an input); Split/Pad/Resize of opset 18
# external initializers from this size: smaller ones stay inline (ORT needs ≥ 128 bytes, and
# shape inference reads the small constants: Reshape targets, axes)
EXTERNAL_BYTES = 1024


class LoweringContext:
    """What a lowering writes into: one ONNX graph under construction.

    Lowerings call `op` to emit nodes (it returns fresh output names), `const`/`ints` for
    constants (stored as initializers, deduplicated), and read the static shape/dtype of the
    values bound to graph entries with `shape`/`dtype`/`rank`. Shapes come from inference at the
    given input shapes; where the batch axis is dynamic a lowering must not bake `shape(x)[0]`
    into the graph: `shape_of(x)` gives the runtime shape as an int64 tensor instead.
    """

    def __init__(self, opset: int = DEFAULT_OPSET):
        self.onnx = require("onnx")
        self.helper = self.onnx.helper
        self.opset = opset
        self.nodes: list = []
        self.initializers: list[str] = []    # names, in order; arrays in _values
        self._names: set[str] = set()
        self._consts: dict[tuple, str] = {}
        self._shapes: dict[str, tuple | None] = {}
        self._dtypes: dict[str, np.dtype | None] = {}
        self._shape_ops: dict[str, str] = {}
        self._values: dict[str, np.ndarray] = {}
        self.prefix = "v"                   # the graph node being lowered names its values
        self.out_shapes: list = []          # inferred output shapes/dtypes of that node
        self.out_dtypes: list = []
        self.out_varying: list = []         # …and which of their axes follow the batch
        self._varying: dict[str, tuple] = {}
        self.dynamic_batch = False
        self.batch_source: str | None = None   # graph input whose axis 0 is the batch
        self.static_batch = 1
        # value name -> another encoding of the same value a later lowering may read instead
        # (an int8 tensor's uint8 twin around 128: ops/_kernels/int8_onnx.py)
        self.twins: dict[str, tuple] = {}
        self._deferred: dict[str, object] = {}

    # -- names --------------------------------------------------------------------------------
    def reserve(self, name: str) -> str:
        """Claim an exact name (graph inputs, parameters, outputs); it must be unused."""
        if name in self._names:
            raise Unsupported(f"ONNX value name {name!r} is used twice")
        self._names.add(name)
        return name

    def taken(self, name: str) -> bool:
        return name in self._names

    def fresh(self, hint: str = "") -> str:
        base = f"{self.prefix}_{hint}" if hint else self.prefix
        name, k = base, 1
        while name in self._names:
            name, k = f"{base}_{k}", k + 1
        self._names.add(name)
        return name

    # -- values -------------------------------------------------------------------------------
    def bind(self, name: str, shape: tuple | None, dtype, varying: tuple = ()) -> None:
        """Record the static shape/dtype of a value (done for every graph entry) and which of
        its axes follow the dynamic batch."""
        self._shapes[name] = None if shape is None else tuple(shape)
        self._dtypes[name] = None if dtype is None else np.dtype(dtype)
        self._varying[name] = tuple(varying)

    def varying(self, name: str) -> tuple:
        """Axes of `name` whose size follows the dynamic batch (empty for a static graph)."""
        return self._varying.get(name, ())

    def note_dtype(self, name: str, dtype) -> None:
        """Record the dtype of an intermediate value (so `scalar(v, like=name)` matches it)."""
        self._dtypes.setdefault(name, np.dtype(dtype))

    def shape(self, name: str) -> tuple:
        s = self._shapes.get(name)
        if s is None:
            raise Unsupported(f"the shape of {name!r} is not known statically")
        return s

    def rank(self, name: str) -> int:
        return len(self.shape(name))

    def dtype(self, name: str) -> np.dtype:
        d = self._dtypes.get(name)
        return np.dtype(np.float32) if d is None else d

    def out_dtype(self, i: int = 0) -> np.dtype:
        d = self.out_dtypes[i] if i < len(self.out_dtypes) else None
        return np.dtype(np.float32) if d is None else np.dtype(d)

    def out_shape(self, i: int = 0) -> tuple:
        s = self.out_shapes[i] if i < len(self.out_shapes) else None
        if s is None:
            raise Unsupported("the output shape is not known statically")
        return tuple(s)

    def tensor_type(self, dtype) -> int:
        return self.helper.np_dtype_to_tensor_dtype(np.dtype(dtype))

    # -- emission -----------------------------------------------------------------------------
    def op(self, op_type: str, inputs: Sequence[str], n_out: int = 1, hint: str = "",
           **attrs) -> "str | list[str]":
        """Emit one ONNX node; returns its output name (or list of names when n_out > 1).
        An empty string in `inputs` is an omitted optional input."""
        outs = [self.fresh(hint or op_type.lower()) for _ in range(n_out)]
        attrs = {k: v for k, v in attrs.items() if v is not None}
        self.nodes.append(self.helper.make_node(op_type, list(inputs), outs,
                                                name=self.fresh(f"{op_type}"), **attrs))
        return outs[0] if n_out == 1 else outs

    def defer(self, name: str, emit) -> str:
        """A value written only if a node reads it: `emit()` writes its nodes and returns the
        value `name` then copies (see `materialize`)."""
        self._deferred[name] = emit
        return name

    def materialize(self) -> None:
        """Write the deferred values that the graph reads, each right after the nodes it reads
        (the node list stays in topological order)."""
        while True:
            read = {i for n in self.nodes for i in n.input}
            todo = [k for k in self._deferred if k in read]
            if not todo:
                return
            for k in todo:
                start = len(self.nodes)
                src = self._deferred.pop(k)()
                self.nodes.append(self.helper.make_node("Identity", [src], [k],
                                                        name=self.fresh("Identity")))
                new = self.nodes[start:]
                del self.nodes[start:]
                made = {o for n in new for o in n.output}
                needs = {i for n in new for i in n.input} - made
                at = max((j + 1 for j, n in enumerate(self.nodes) if needs & set(n.output)),
                         default=0)
                self.nodes[at:at] = new

    def const(self, value, dtype=None, hint: str = "const") -> str:
        """An initializer holding `value` (small identical constants are shared)."""
        arr = np.asarray(value, dtype=dtype)
        key = (arr.dtype.str, arr.shape, arr.tobytes()) if arr.size <= 64 else None
        if key is not None and key in self._consts:
            return self._consts[key]
        name = self.fresh(hint)
        self.add_initializer(name, arr)
        if key is not None:
            self._consts[key] = name
        return name

    def ints(self, values: Sequence[int]) -> str:
        """A 1-D int64 constant (shapes, axes, pads)."""
        return self.const(np.asarray(list(values), np.int64), hint="ints")

    def scalar(self, value, like: str) -> str:
        """A 0-d constant in the dtype of value `like` (for arithmetic with it)."""
        return self.const(np.asarray(value, self.dtype(like)), hint="k")

    def add_initializer(self, name: str, arr: np.ndarray) -> None:
        self._values[name] = np.asarray(arr)
        self.initializers.append(name)

    def write_initializers(self, graph, names, external: dict | None = None) -> None:
        """Store the arrays of `names` in `graph`, each copied once (parameters are large).
        With `external` (a dict), arrays of at least EXTERNAL_BYTES are not copied: their
        initializers say only "external data" and `external` receives name → array, for an
        ONNX Runtime session to take by reference (`add_external_initializers`)."""
        for name in names:
            arr = self._values[name]
            t = graph.initializer.add()
            t.name = name
            t.data_type = self.tensor_type(arr.dtype)
            t.dims.extend(arr.shape)
            if external is not None and arr.nbytes >= EXTERNAL_BYTES:
                external[name] = np.ascontiguousarray(arr)
                t.data_location = self.onnx.TensorProto.EXTERNAL
                ref = t.external_data.add()
                ref.key, ref.value = "location", f"hybridserve-memory/{len(external)}"
            else:
                t.raw_data = arr.tobytes()      # C order

    def value(self, name: str) -> np.ndarray | None:
        """The array behind `name` when it is a constant (parameter or `const`), else None:
        lowerings fold what depends on parameters only (RNN weight repacking)."""
        return self._values.get(name)

    def shape_of(self, name: str) -> str:
        """The runtime shape of `name` (int64, 1-D), one Shape node per value."""
        if name not in self._shape_ops:
            self._shape_ops[name] = self.op("Shape", [name], hint="shape")
        return self._shape_ops[name]

    def dim(self, name: str, axis: int) -> str:
        """Runtime size of one axis as a 1-element int64 tensor."""
        return self.op("Slice", [self.shape_of(name), self.ints([axis]), self.ints([axis + 1])],
                       hint="dim")

    def zeros_like(self, name: str, dtype=None) -> str:
        """Zeros of `name`'s runtime shape (dtype of `name` unless given)."""
        dt = self.dtype(name) if dtype is None else np.dtype(dtype)
        value = self.helper.make_tensor("value", self.tensor_type(dt), [1], [0])
        return self.op("ConstantOfShape", [self.shape_of(name)], value=value)

    def batch(self) -> str:
        """The runtime batch size (1-element int64)."""
        if self.batch_source is None:
            raise Unsupported("no dynamic batch to read")
        return self.dim(self.batch_source, 0)

    def runtime_shape(self, shape, varying=()) -> str:
        """An int64 shape tensor: `shape`, with its `varying` axes scaled by the runtime batch."""
        if not varying:
            return self.ints(shape)
        parts = []
        for i, d in enumerate(shape):
            if i not in varying:
                parts.append(self.ints([d]))
            elif d % self.static_batch:
                raise Unsupported(f"axis {i} of size {d} is not a multiple of the batch")
            else:
                k = d // self.static_batch
                b = self.batch()
                parts.append(b if k == 1 else self.op("Mul", [b, self.ints([k])]))
        return self.op("Concat", parts, axis=0)

    def reshape_target(self, i: int = 0) -> str:
        """A Reshape target for output `i`: its static shape, with -1 on the one axis that
        follows the batch (several such axes: from the runtime batch)."""
        out, vary = list(self.out_shape(i)), self.out_varying[i] if self.out_varying else ()
        if len(vary) == 1:
            out[vary[0]] = -1
            return self.ints(out)
        return self.runtime_shape(out, vary)

    def cast(self, name: str, dtype) -> str:
        if self.dtype(name) == np.dtype(dtype) and name in self._dtypes:
            return name
        return self.op("Cast", [name], to=self.tensor_type(dtype))
