"""optimize_for backends on real fixture graphs: outputs unchanged, graphs smaller, exportable."""
import numpy as np
import pytest

from fixture_util import load_fixture
from framework.compiler import Plan
from framework.compiler.backends import get_backend, list_backends
from framework.symbol import load_json

ZOO = ["mini_resnet_v1", "mini_resnet_v1_bottleneck", "mini_resnet_v2_bottleneck", "mini_mobilenet_v1",
       "mini_mobilenet_v2", "mini_densenet", "mini_inception", "mini_vgg_alexnet", "fc_flatten",
       "dropout_flatten", "misc_ops", "lstm_2layer"]


def _run(sym, params, inputs):
    names = sym.list_inputs()
    feed = {**params, **inputs}
    return Plan(sym, names).run([np.asarray(feed[n]) for n in names])


@pytest.mark.parametrize("name", ZOO)
@pytest.mark.parametrize("backend", ["hybridserve", "fold_bn", "simplify"])
def test_backend_keeps_outputs(name, backend):
    sym, params, inputs, expected = load_fixture("mxnet-1.9.1", name)
    aux = set(sym.list_auxiliary_states())
    args = {k: v for k, v in params.items() if k not in aux}
    auxd = {k: v for k, v in params.items() if k in aux}
    new, nargs, naux = get_backend(backend)(sym, args, auxd)
    outs = _run(new, {**nargs, **naux}, inputs)
    for o, e in zip(outs, expected):
        np.testing.assert_allclose(o, e, rtol=1e-4, atol=1e-5)
    # the optimised graph serialises and reloads (it is what optimize_for + export writes)
    again = load_json(new.tojson())
    outs2 = _run(again, {**nargs, **naux}, inputs)
    for o, p in zip(outs2, outs):
        np.testing.assert_array_equal(o, p)


def test_fold_bn_removes_every_foldable_batchnorm():
    sym, params, inputs, _ = load_fixture("mxnet-1.9.1", "mini_resnet_v1_bottleneck")
    before = sum(n.opname == "BatchNorm" for n in sym.topo())
    new, args, aux = get_backend("hybridserve")(sym, params, {})
    after = sum(n.opname == "BatchNorm" for n in new.topo())
    assert before > 0 and after < before
    assert not new.list_auxiliary_states() or after > 0


def test_simplify_drops_identities():
    sym, params, inputs, _ = load_fixture("mxnet-1.9.1", "dropout_flatten")
    new, *_ = get_backend("simplify")(sym, params, {})
    assert not any(n.opname == "Dropout" for n in new.topo())


def test_mkldnn_alias_and_unknown_backend():
    assert {"MKLDNN", "ONEDNN", "hybridserve", "fold_bn"} <= set(list_backends())
    with pytest.raises(Exception, match="registered backends"):
        get_backend("nope")
