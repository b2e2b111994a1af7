"""BatchNorm variants seen in MXNet exports compute what BatchNorm (+ReLU) computes."""
import json

import numpy as np
import pytest

from framework.compiler import Plan
from framework.ops.registry import get_op
from framework.symbol import load_json

RNG = np.random.default_rng(0)
X = RNG.normal(size=(2, 3, 4, 4)).astype(np.float32)
STATS = [(RNG.random(3) + 0.5).astype(np.float32), RNG.normal(size=3).astype(np.float32),
         (RNG.normal(size=3) * 0.1).astype(np.float32), (RNG.random(3) + 0.5).astype(np.float32)]


def _first(o):
    return o[0] if isinstance(o, tuple) else o


def _bn(**attrs):
    op = get_op("BatchNorm")
    return _first(op.kernel(op.parse_attrs({"fix_gamma": "False", **attrs}), X, *STATS))


@pytest.mark.parametrize("name,attrs", [("BatchNorm_v1", {}), ("_contrib_SyncBatchNorm",
                                                               {"ndev": "2", "key": "bn0"})])
def test_variants_equal_batchnorm(name, attrs):
    op = get_op(name)
    a = op.parse_attrs({"fix_gamma": "False", **attrs})
    np.testing.assert_array_equal(_first(op.kernel(a, X, *STATS)), _bn())
    assert op.shapes(a, [X.shape] + [(3,)] * 4)[0] == X.shape


@pytest.mark.parametrize("name", ["_contrib_BatchNormWithReLU", "_npx_batch_norm_with_relu"])
def test_fused_relu(name):
    op = get_op(name)
    out = _first(op.kernel(op.parse_attrs({"fix_gamma": "False"}), X, *STATS))
    np.testing.assert_array_equal(out, np.maximum(_bn(), 0))


def test_graph_with_sync_batchnorm_loads_and_has_aux_states():
    doc = {"nodes": [{"op": "null", "name": "data", "inputs": []}]
           + [{"op": "null", "name": f"bn_{n}", "inputs": []}
              for n in ("gamma", "beta", "moving_mean", "moving_var")]
           + [{"op": "_contrib_SyncBatchNorm", "name": "bn",
               "attrs": {"fix_gamma": "False", "ndev": "4", "key": "bn"},
               "inputs": [[i, 0, 0] for i in range(5)]}],
           "arg_nodes": [0, 1, 2, 3, 4], "heads": [[5, 0, 0]],
           "attrs": {"mxnet_version": ["int", 10901]}}
    sym = load_json(json.dumps(doc))
    assert sym.list_auxiliary_states() == ["bn_moving_mean", "bn_moving_var"]
    out = Plan(sym, sym.list_inputs()).run([X, *STATS])[0]
    np.testing.assert_array_equal(out, _bn())
