"""ONNX lowering and export: each operator's `OpDef.onnx` turns graph nodes into ONNX nodes.

The API (the ONNX Runtime partitioner and the exporters build on these):

- `lowers(*opdefs, check=None)` — decorator, used at the end of an op family module, that
  attaches `fn(ctx, node, inputs) -> output name(s)` as those ops' lowering (`OpDef.onnx`, an
  `OnnxLowering`). `check(attrs) -> reason | None` refuses attr combinations ONNX cannot express;
  `fn` may also raise `Unsupported(reason)` for what only shapes/dtypes reveal.
- `lowerable(node)` / `refusal(node)` — whether a graph node can be lowered (op and attrs only,
  nothing is built, neither `onnx` nor `onnxruntime` is needed): what a partitioner asks.
- `lower_symbol(symbol, params, shapes, dtypes=None, dynamic_batch=True, opset=18)` — the
  `onnx.ModelProto` of a symbol whose inputs are variables: those in `params` become
  initializers (names kept), the rest graph inputs (leading axis symbolic when `dynamic_batch`);
  outputs are named `symbol.list_outputs()`. A node that cannot be lowered raises
  `OnnxLoweringError` naming the node and its op.
- `LoweringContext` — what a lowering writes into: `op(type, inputs, n_out, **attrs)`,
  `const`/`ints`/`scalar`, `shape`/`rank`/`dtype` of bound values and `out_shape`/`out_dtype` of
  the node's outputs (static, inferred at the given shapes), `varying(v)` — the axes that follow
  the dynamic batch (found by inferring again at a doubled batch) — with `reshape_target()` /
  `runtime_shape()` to write such shapes, `shape_of`/`dim` at runtime, and `value(v)`, the array
  of a constant. A node whose inputs are all constants is folded by its NumPy kernel.
- Dynamic batch: the leading axis of every graph input is symbolic (`batch`) when the graph
  infers at a doubled leading axis too; a graph that does not (axis 0 is not a batch) keeps
  static inputs. A partitioner lowering a subgraph whose inputs do not share a leading batch axis
  should pass `dynamic_batch=False`.
- `export_symbol(symbol, params, path, shapes)` / `convert(symbol_file, params_file, out,
  input_shapes=None)` — write a `.onnx` file (checked by `onnx.checker`);
  `HybridBlock.export(path, format='onnx')` (SymbolBlock too) writes `path.onnx` through
  `export_block`.

`import framework` never imports `onnx`/`onnxruntime`: they are imported when a model is built,
and their absence then raises `MissingDependencyError` naming the package.
"""
from .build import BATCH, lower_symbol, lowerable, refusal  # noqa: F401
from .context import DEFAULT_OPSET, LoweringContext  # noqa: F401
from .export import convert, export_block, export_symbol  # noqa: F401
from .deps import MissingDependencyError, require  # noqa: F401
from .partition import partition_onnxruntime  # noqa: F401  (registers the `onnxruntime` backend)
from ..ops.lowering import OnnxLowering, OnnxLoweringError, Unsupported, lowers, lowers_named, refuse_if, simple  # noqa: F401
