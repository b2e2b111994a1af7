"""HybridBlock.export (MXNET_FORMATS §6) and optimize_for backends."""
import json
import os
import zipfile

import numpy as onp
import pytest

import framework as mx
from framework import np
from framework.gluon import HybridBlock, SymbolBlock, nn
from framework.symbol.graph import _Symbol

_VAR = ('      "attrs": {{\n        "__dtype__": "0", \n{init}        "__lr_mult__": "1.0", \n'
        '        "__profiler_scope__": "<unk>:", \n        "__shape__": "{shape}", \n'
        '        "__storage_type__": "0", \n        "__wd_mult__": "1.0"\n      }}, \n')


def _x(*shape, seed=0):
    return np.array(onp.random.default_rng(seed).uniform(-1, 1, shape).astype("float32"))


def test_minimal_dense_export_is_byte_exact(tmp_path):
    d = nn.Dense(2)
    d.initialize()
    d.hybridize()
    d(_x(1, 3))
    sym_file, params_file = d.export(str(tmp_path / "d"), epoch=7)
    assert os.path.basename(sym_file) == "d-symbol.json" and params_file.endswith("d-0007.params")
    text = open(sym_file).read()
    node = json.loads(text)["nodes"][3]["name"]
    want = ('{\n  "nodes": [\n    {\n      "op": "null", \n      "name": "data", \n'
            '      "attrs": {"__profiler_scope__": "<unk>:"}, \n      "inputs": []\n    }, \n'
            '    {\n      "op": "null", \n      "name": "weight", \n'
            + _VAR.format(init="", shape="(2, 3)") + '      "inputs": []\n    }, \n'
            '    {\n      "op": "null", \n      "name": "bias", \n'
            + _VAR.format(init='        "__init__": "zeros", \n', shape="(2,)") +
            '      "inputs": []\n    }, \n'
            '    {\n      "op": "FullyConnected", \n      "name": "' + node + '", \n'
            '      "attrs": {\n        "flatten": "1", \n        "no_bias": "0", \n'
            '        "num_hidden": "2"\n      }, \n'
            '      "inputs": [[0, 0, 0], [1, 0, 0], [2, 0, 0]]\n    }\n  ], \n'
            '  "arg_nodes": [0, 1, 2], \n  "node_row_ptr": [0, 1, 2, 3, 4], \n'
            '  "heads": [[3, 0, 0]], \n  "attrs": {\n    "is_np_shape": ["int", 1], \n'
            '    "mxnet_version": ["int", 20000]\n  }\n}')
    assert text == want
    assert zipfile.ZipFile(params_file).namelist() == ["arg:weight.npy", "arg:bias.npy"]


def test_export_requires_capture():
    net = nn.HybridSequential()
    net.add(nn.Dense(2))
    net.initialize()
    net(_x(1, 3))
    with pytest.raises(RuntimeError, match="Please first call block.hybridize\\(\\) and then run "
                                           "forward with this block at least once"):
        net.export(None)


def test_export_none_types_and_internals():
    net = nn.HybridSequential()
    net.add(nn.Dense(3, activation="relu"), nn.BatchNorm(), nn.Dense(2))
    net.initialize()
    net.hybridize()
    net(_x(2, 5))
    sym, args = net.export(None)
    assert isinstance(sym, _Symbol) and type(args) is dict
    assert all(isinstance(v, mx.np.ndarray) for v in args.values())
    assert list(args) == ["arg:0.weight", "arg:0.bias", "arg:1.gamma", "arg:1.beta",
                          "aux:1.running_mean", "aux:1.running_var", "arg:2.weight", "arg:2.bias"]
    assert sym.list_auxiliary_states() == ["1.running_mean", "1.running_var"]
    internals = sym.get_internals().list_outputs()
    assert internals[:3] == ["data", "0.weight", "0.bias"] and internals[3].endswith("_output")
    assert repr(sym).startswith("<_Symbol node_")


def test_shared_params_export_under_last_structural_name(tmp_path):
    class S(HybridBlock):
        def __init__(self):
            super().__init__()
            self.d = nn.Dense(2, in_units=3)
            self.e = nn.Dense(2, in_units=2)
            self.f = nn.Dense(2, in_units=2)
            self.f.share_parameters(self.e.collect_params())

        def forward(self, x):
            return self.f(self.e(self.d(x)))

    s = S()
    with pytest.warns(UserWarning, match="is already initialized"):
        s.initialize()
    s.hybridize()
    x = _x(4, 3)
    want = s(x).asnumpy()
    sym, args = s.export(None)
    assert sym.list_inputs() == ["data", "d.weight", "d.bias", "f.weight", "f.bias"]
    assert list(args) == ["arg:d.weight", "arg:d.bias", "arg:f.weight", "arg:f.bias"]
    files = s.export(str(tmp_path / "s"))
    back = SymbolBlock.imports(files[0], ["data"], files[1])     # dtypes from the params file: no warning
    onp.testing.assert_allclose(back(x).asnumpy(), want, rtol=1e-6)
    t = S()
    t.load_parameters(files[1])                  # arg:/aux: stripped, shared names resolve
    onp.testing.assert_allclose(t(x).asnumpy(), want, rtol=1e-6)


def test_export_no_params_returns_none_but_writes_file(tmp_path):
    class NoParams(HybridBlock):
        def forward(self, x):
            return mx.npx.relu(x) * 2

    net = NoParams()
    net.hybridize()
    net(_x(2, 2))
    sym_file, params_file = net.export(str(tmp_path / "np"))
    assert params_file is None and (tmp_path / "np-0000.params").exists()
    nodes = json.loads(open(sym_file).read())["nodes"]
    assert [n["op"] for n in nodes] == ["null", "_npx_relu", "_npi_multiply_scalar"]


@pytest.mark.parametrize("backend", ["BNFold", None])
def test_optimize_for_then_export(tmp_path, backend):
    net = nn.HybridSequential()
    net.add(nn.Conv2D(4, 3), nn.BatchNorm(), nn.Activation("relu"), nn.Flatten(), nn.Dense(3),
            nn.BatchNorm(), nn.Dense(2))
    net.initialize()
    x = _x(2, 3, 8, 8)
    net(x)
    rng = onp.random.default_rng(5)
    for k, p in net.collect_params().items():
        if k.split(".")[-1] in ("gamma", "beta", "running_mean", "running_var"):
            p.set_data(np.array(rng.uniform(0.5, 1.5, p.shape).astype("float32")))
    want = net(x).asnumpy()
    net.optimize_for(x, backend=backend)
    ops = [n.opname for n in net._cached_graph[1].topo() if not n.is_var]
    assert ("BatchNorm" in ops) == (backend is None)
    onp.testing.assert_allclose(net(x).asnumpy(), want, rtol=1e-4, atol=1e-5)
    sym_file, params_file = net.export(str(tmp_path / "opt"))
    names = [m[4:-4] for m in zipfile.ZipFile(params_file).namelist()]
    assert set(names) == set(json.loads(open(sym_file).read())["nodes"][i]["name"]
                             for i in json.loads(open(sym_file).read())["arg_nodes"]) - {"data"}
    back = SymbolBlock.imports(sym_file, ["data"], params_file)     # dtypes from the params file: no warning
    onp.testing.assert_allclose(back(x).asnumpy(), want, rtol=1e-4, atol=1e-5)
