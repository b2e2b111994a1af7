"""Shared helpers for the tensor-op tests: run an op by name on NumPy inputs and check that its
`infer_shape` / `infer_type` agree with what the kernel returns."""
from __future__ import annotations

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
