"""Image operators against outputs recorded from real MXNet 2.0 (tests/fixtures/image_ops_mx2.npz,
written by tests/interop/gen_image_refs.py). uint8 results may differ by one: OpenCV resizes
uint8 in fixed point, hybridserve in float32."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from framework.ops.registry import get_op

REFS = np.load(Path(__file__).parents[1] / "fixtures" / "image_ops_mx2.npz")
META = json.loads(str(REFS["meta"]))


@pytest.mark.parametrize("i", range(len(META)),
                         ids=[f"{m['op']}-{i}" for i, m in enumerate(META)])
def test_matches_mxnet(i):
    m = META[i]
    op = get_op(m["op"])
    a = op.parse_attrs(m["attrs"])
    ins = [REFS[f"{i}:in{j}"] for j in range(m["n_in"])]
    out = op.kernel(a, *ins)
    ref = REFS[f"{i}:out0"]
    assert out.shape == ref.shape == op.shapes(a, [x.shape for x in ins])[0]
    assert out.dtype == ref.dtype == op.dtypes(a, [x.dtype for x in ins])[0]
    if ref.dtype == np.uint8:
        assert np.abs(out.astype(int) - ref.astype(int)).max() <= 1
    else:
        np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-3 if ins[0].max() > 2 else 1e-5)
