"""Contrib detection operators against outputs recorded from real MXNet 1.9.1 on random inputs
(tests/fixtures/contrib_ops.npz, written by tests/interop/gen_contrib_refs.py)."""
from __future__ import annotations

import numpy as np
import pytest
from _helpers import recorded, run_recorded

REFS, META = recorded("contrib_ops.npz")


@pytest.mark.parametrize("i", range(len(META)),
                         ids=[f"{m['op']}-{i}" for i, m in enumerate(META)])
def test_matches_mxnet(i):
    m = META[i]
    op, a, ins, outs = run_recorded(REFS, META, i)
    shapes = op.shapes(a, [x.shape for x in ins])
    assert [o.shape for o in outs] == shapes
    for j in range(m["n_out"]):
        ref = REFS[f"{i}:out{j}"]
        assert outs[j].dtype == ref.dtype
        np.testing.assert_allclose(outs[j], ref, rtol=1e-4, atol=1e-5, err_msg=f"output {j}")
