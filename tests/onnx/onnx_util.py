"""Shared helpers of the ONNX tests: lower a graph, check it, run it in stock onnxruntime."""
from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort

from framework.onnx import lower_symbol
from framework.symbol.graph import Node, Symbol


def session(model) -> ort.InferenceSession:
    onnx.checker.check_model(model, full_check=True)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.log_severity_level = 3
    return ort.InferenceSession(model.SerializeToString(), opts,
                                providers=["CPUExecutionProvider"])


def run_onnx(sym: Symbol, params: dict, inputs: dict, **kw) -> list[np.ndarray]:
    """Lower `sym` at the shapes of `inputs`, check the model, run it on `inputs`."""
    model = lower_symbol(sym, params, {k: np.shape(v) for k, v in inputs.items()},
                         {k: np.asarray(v).dtype for k, v in inputs.items()}, **kw)
    sess = session(model)                 # unused inputs (a loss op's label) are not declared
    return sess.run(None, {i.name: np.asarray(inputs[i.name]) for i in sess.get_inputs()})


def op_symbol(opname: str, attrs: dict, n_inputs: int, names=None) -> Symbol:
    """One op node over variables `x0..x{n-1}` (or `names`), all its visible outputs."""
    names = names or [f"x{i}" for i in range(n_inputs)]
    node = Node(opname, "node", {k: str(v) for k, v in attrs.items()},
                [(Node("null", n), 0) for n in names])
    return Symbol([(node, i) for i in range(node.num_visible())])


def kernel_outputs(sym: Symbol, inputs: list[np.ndarray]) -> list[np.ndarray]:
    node = sym.outputs[0][0]
    outs = node.op.kernel(node.parsed, *inputs)
    outs = outs if isinstance(outs, tuple) else (outs,)
    return [np.asarray(o) for o in outs[: node.num_visible()]]


def assert_close(got, want, rtol=1e-4, atol=1e-5):
    """The project's float32 bound (rtol 1e-4 / atol 1e-5); exact for ints and bools."""
    assert len(got) == len(want)
    for g, w in zip(got, want):
        w = np.asarray(w)
        assert g.shape == w.shape, (g.shape, w.shape)
        if w.dtype.kind in "fc":
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)
        else:
            np.testing.assert_array_equal(g, w)


def check_op(opname: str, attrs: dict, inputs: list[np.ndarray], params: dict | None = None,
             **kw) -> None:
    """The ONNX lowering of one op equals its NumPy kernel on `inputs` (x0, x1…)."""
    sym = op_symbol(opname, attrs, len(inputs))
    feed = {f"x{i}": v for i, v in enumerate(inputs)}
    params = {k: feed.pop(k) for k in (params or {})}
    want = kernel_outputs(sym, inputs)
    got = run_onnx(sym, params, feed, **kw)
    assert_close(got, want)


def imports_fixture(version: str, name: str):
    """A committed MXNet export as `SymbolBlock.imports` gives it: (block, its data inputs as
    framework arrays, MXNet's recorded outputs)."""
    import framework as mx
    from fixture_util import FIXTURES, load_fixture
    from framework.gluon import SymbolBlock
    sym, _, inputs, expected = load_fixture(version, name)
    d = FIXTURES / version
    names = [n for n in sym.list_inputs() if n in inputs]
    blk = SymbolBlock.imports(str(d / f"{name}-symbol.json"), names,
                              str(d / f"{name}-0000.params"))
    return blk, [mx.np.array(inputs[n]) for n in names], expected
