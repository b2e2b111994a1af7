"""Shared helpers for the tensor-op tests: run an op by name on NumPy inputs and check that its
`infer_shape` / `infer_type` agree with what the kernel returns."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from framework.ops import get_op


def run_op(name, *inputs, **attrs):
    """Run op `name` on NumPy `inputs` with Python attrs; returns the output(s) and checks the
    op's shape/dtype inference against them."""
    op = get_op(name)
    a = op.parse_attrs(attrs)
    res = op.kernel(a, *inputs)
    outs = res if isinstance(res, tuple) else (res,)
    for o in outs:
        assert isinstance(o, np.ndarray), f"{name}: kernel returned {type(o).__name__}"
    shapes = op.shapes(a, [x.shape for x in inputs])
    assert [tuple(o.shape) for o in outs] == [tuple(s) for s in shapes], \
        f"{name}: infer_shape {shapes} != kernel {[o.shape for o in outs]}"
    if inputs:
        types = op.dtypes(a, [x.dtype for x in inputs])
        assert [np.dtype(o.dtype) for o in outs] == [np.dtype(t) for t in types[:len(outs)]], \
            f"{name}: infer_type {types} != kernel {[o.dtype for o in outs]}"
    return res


def rnd(*shape, seed=0, low=-2.0, high=2.0, dtype=np.float32):
    return np.random.RandomState(seed).uniform(low, high, shape).astype(dtype)


def close(a, b, rtol=1e-5, atol=1e-6):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol)


def recorded(fixture: str) -> tuple:
    """(arrays, cases) of a tests/fixtures/<fixture> file of real-MXNet outputs: case i has inputs
    `i:in<j>` and outputs `i:out<j>` and a meta entry (op, string attrs, n_in)."""
    refs = np.load(Path(__file__).parents[1] / "fixtures" / fixture)
    return refs, json.loads(str(refs["meta"]))


def run_recorded(refs, meta: list, i: int) -> tuple:
    """Run recorded case i: (op, parsed attrs, inputs, outputs as a tuple)."""
    m = meta[i]
    op = get_op(m["op"])
    a = op.parse_attrs(m["attrs"])
    ins = [refs[f"{i}:in{j}"] for j in range(m["n_in"])]
    outs = op.kernel(a, *ins)
    return op, a, ins, outs if isinstance(outs, tuple) else (outs,)
