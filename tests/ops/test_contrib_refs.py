"""Contrib detection operators against outputs recorded from real MXNet 1.9.1 on random inputs
(tests/fixtures/contrib_ops.npz, written by tests/interop/gen_contrib_refs.py)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from framework.ops.registry import get_op

REFS = np.load(Path(__file__).parents[1] / "fixtures" / "contrib_ops.npz")
META = json.loads(str(REFS["meta"]))


@pytest.mark.parametrize("i", range(len(META)),
                         ids=[f"{m['op']}-{i}" for i, m in enumerate(META)])
def test_matches_mxnet(i):
    m = META[i]
    op = get_op(m["op"])
    a = op.parse_attrs(m["attrs"])
    ins = [REFS[f"{i}:in{j}"] for j in range(m["n_in"])]
    outs = op.kernel(a, *ins)
    outs = outs if isinstance(outs, tuple) else (outs,)
    shapes = op.shapes(a, [x.shape for x in ins])
    assert [o.shape for o in outs] == shapes
    for j in range(m["n_out"]):
        ref = REFS[f"{i}:out{j}"]
        assert outs[j].dtype == ref.dtype
        np.testing.assert_allclose(outs[j], ref, rtol=1e-4, atol=1e-5, err_msg=f"output {j}")
