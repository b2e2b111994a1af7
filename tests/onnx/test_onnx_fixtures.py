"""Every committed real-MXNet fixture (1.9.1 and 2.0.0b1) lowered to ONNX and run by stock
onnxruntime gives MXNet's recorded outputs; at a doubled batch it gives the NumPy engine's."""
import numpy as np
import pytest

from fixture_util import VERSIONS, fixture_names, load_fixture
from framework.compiler import Plan
from framework.onnx import lower_symbol

from onnx_util import session

CASES = [(v, n) for v in VERSIONS for n in fixture_names(v)]


def _within_bound(got, want):
    """The project's deep-net bound: max|Δ| ≤ 1e-4 · max(1, max|ref|)."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    assert got.shape == want.shape
    if want.size:
        scale = max(1.0, float(np.max(np.abs(want))))
        assert float(np.max(np.abs(got - want))) <= 1e-4 * scale


@pytest.mark.parametrize("version,name", CASES, ids=[f"{v}-{n}" for v, n in CASES])
def test_fixture_matches_mxnet_in_onnxruntime(version, name):
    sym, params, inputs, expected = load_fixture(version, name)
    model = lower_symbol(sym, params, {k: v.shape for k, v in inputs.items()})
    sess = session(model)
    feed = {i.name: inputs[i.name] for i in sess.get_inputs()}
    outs = sess.run(None, feed)
    assert len(outs) == len(expected)
    for got, want in zip(outs, expected):
        _within_bound(got, want)
    if len(inputs) > 1 or not model.graph.input[0].type.tensor_type.shape.dim[0].dim_param:
        return                     # (several inputs need not share a leading batch axis)
    # another batch size through the same model, against the NumPy engine
    big = {k: np.concatenate([v, v[::-1]]) for k, v in inputs.items()}
    names = sym.list_inputs()
    want = Plan(sym, names).run([np.asarray({**params, **big}[n]) for n in names])
    for got, ref in zip(sess.run(None, {k: big[k] for k in feed}), want):
        _within_bound(got, ref)
