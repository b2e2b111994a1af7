"""Pre-activation BatchNorm + ReLU folded into the following 1x1 conv (passes/fold_preact.py)."""

from fixture_util import load_fixture
from framework.compiler.backends import get_backend
from test_layout import ZOO, check, run
import pytest


@pytest.mark.parametrize("name", ZOO)
def test_pipeline_keeps_outputs(name):
    sym, params, inputs, expected = load_fixture("mxnet-1.9.1", name)
    new, a, x = get_backend("hybridserve")(sym, params, {})
    check(run(new, {**a, **x}, inputs), expected)
    check(run(new, {**a, **x}, inputs, static=True), expected)


def test_densenet_preact_folds_to_channel_max():
    sym, params, inputs, expected = load_fixture("mxnet-1.9.1", "mini_densenet")
    new, a, x = get_backend("hybridserve")(sym, params, {})
    ops = [n.opname for n in new.topo() if not n.is_var]
    assert "_hs_chmax" in ops
    check(run(new, {**a, **x}, inputs), expected)


def test_negative_scale_is_not_folded():
    sym, params, inputs, expected = load_fixture("mxnet-1.9.1", "mini_densenet")
    params = dict(params)
    gammas = [k for k in params if k.endswith("gamma")]
    for k in gammas:                      # a negative gamma somewhere in every BatchNorm
        g = params[k].copy()
        g[0] = -abs(g[0]) - 0.5
        params[k] = g
    ref_sym, ra, rx = get_backend("simplify")(sym, params, {})
    ref = run(ref_sym, {**ra, **rx}, inputs)
    new, a, x = get_backend("hybridserve")(sym, params, {})
    assert "_hs_chmax" not in [n.opname for n in new.topo()]
    check(run(new, {**a, **x}, inputs), ref)
