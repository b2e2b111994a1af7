"""Helpers shared by the neural-network op tests (tests/ops/test_{activation,softmax,conv,pool,
norm,rnn,nn_misc,npx_frontend}.py)."""
from __future__ import annotations

import json

import numpy as np

from fixture_util import FIXTURES, run_fixture
from framework.ops.registry import get_op, has_op

RTOL, ATOL = 1e-4, 1e-5


def run_op(name: str, attrs: dict, *inputs, check: bool = True):
    """Run a registry kernel on NumPy inputs; with `check`, compare infer_shape / infer_type /
    output count with what the kernel returned. Returns the tuple of all outputs."""
    op = get_op(name)
    a = op.parse_attrs(attrs)
    before = [np.array(x, copy=True) for x in inputs]
    res = op.kernel(a, *inputs)
    for x, b in zip(inputs, before):          # kernels never mutate their inputs
        np.testing.assert_array_equal(x, b)
    outs = res if isinstance(res, tuple) else (res,)
    if check:
        assert len(outs) == op.n_outputs(a), (name, len(outs), op.n_outputs(a))
        shapes = op.shapes(a, [tuple(np.shape(x)) for x in inputs])
        assert shapes == [o.shape for o in outs], (name, shapes, [o.shape for o in outs])
        types = op.dtypes(a, [np.asarray(x).dtype for x in inputs])
        assert np.dtype(types[0]) == outs[0].dtype, (name, types[0], outs[0].dtype)
        if op.infer_param_shapes is not None:
            filled = op.infer_param_shapes(a, [tuple(np.shape(x)) for x in inputs])
            for want, x in zip(filled, inputs):
                assert tuple(want) == tuple(np.shape(x)), (name, filled)
    return outs


def fixture_ops(version: str, name: str) -> list[str]:
    doc = json.loads((FIXTURES / version / f"{name}-symbol.json").read_text())
    return sorted({n["op"] for n in doc["nodes"] if n["op"] != "null"})


def check_fixture(version: str, name: str) -> None:
    """Run a real-MXNet fixture model and compare every output (rtol 1e-4, atol 1e-5). An
    operator the registry lacks fails the test, naming the operators."""
    missing = [op for op in fixture_ops(version, name) if not has_op(op)]
    assert not missing, f"fixture {version}/{name} needs unregistered op(s): {', '.join(missing)}"
    outs, expected = run_fixture(version, name)
    assert len(outs) == len(expected)
    for i, (o, e) in enumerate(zip(outs, expected)):
        assert o.shape == e.shape, (name, i, o.shape, e.shape)
        np.testing.assert_allclose(o, e, rtol=RTOL, atol=ATOL, err_msg=f"{name} output {i}")


def rand(rng, *shape, lo=None, hi=None):
    if lo is not None:
        return rng.uniform(lo, hi, shape).astype(np.float32)
    return rng.standard_normal(shape).astype(np.float32)
