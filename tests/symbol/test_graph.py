"""Symbol graphs: the two symbol classes, listings, MXNet's JSON layout, variables, tracing."""
import json

import numpy as onp
import pytest

import framework as mx
from fixture_util import FIXTURES, fixture_names
from framework import np
from framework.symbol import load, load_json, trace
from framework.symbol.graph import Group, Symbol, _Symbol, rename_vars, var


def _bn_graph():
    data = var("data")
    fc = mx.sym.FullyConnected(data, num_hidden=3, name="fc")
    bn = mx.sym.BatchNorm(fc, name="bn")
    return mx.sym.Activation(bn, act_type="relu", name="act")


def test_legacy_and_numpy_symbol_classes_and_reprs():
    v = var("data")
    assert type(v) is Symbol and repr(v) == "<Symbol data>"
    n = v.as_np_ndarray()
    assert type(n) is _Symbol and repr(n) == "<_Symbol data>"
    assert type(n.as_nd_ndarray()) is Symbol
    g = Group([var("a"), var("b")])
    assert repr(g) == "<Symbol group [a, b]>"
    out = _bn_graph().as_np_ndarray()
    internals = out.get_internals()
    assert type(internals) is Symbol and type(internals["fc_output"]) is Symbol
    assert repr(internals[3]) == "<Symbol fc>"               # names, not output names
    assert type(out.copy()) is _Symbol


def test_listings_follow_mxnet_order_and_names():
    out = _bn_graph()
    assert out.list_inputs() == ["data", "fc_weight", "fc_bias", "bn_gamma", "bn_beta",
                                 "bn_moving_mean", "bn_moving_var"]
    assert out.list_arguments() == ["data", "fc_weight", "fc_bias", "bn_gamma", "bn_beta"]
    assert out.list_auxiliary_states() == ["bn_moving_mean", "bn_moving_var"]
    assert out.list_outputs() == ["act_output"]
    assert out.get_internals().list_outputs() == [
        "data", "fc_weight", "fc_bias", "fc_output", "bn_gamma", "bn_beta", "bn_moving_mean",
        "bn_moving_var", "bn_output", "act_output"]
    with pytest.raises(ValueError, match="There is no output named 'nope'"):
        out.get_internals()["nope"]


def test_var_attrs_and_errors():
    v = var("w", shape=(2, 3), dtype="float16", lr_mult=2.0, init=mx.init.Xavier(), stype="csr")
    assert v.list_attr() == {
        "__profiler_scope__": "<unk>:", "__shape__": "(2, 3)", "__dtype__": "2",
        "__lr_mult__": "2.0", "__storage_type__": "2",
        "__init__": '["xavier", {"rnd_type": "uniform", "factor_type": "avg", "magnitude": 3}]'}
    assert v.attr("shape") == "(2, 3)"
    with pytest.raises(ValueError, match="Attribute name=bad is not supported"):
        var("x", bad=1)
    with pytest.raises(TypeError):
        var(3)


def test_tojson_layout_matches_dmlc_writer():
    many = Group([var(f"v{i}") for i in range(11)])
    text = many.tojson()
    assert '  "arg_nodes": [\n    0, \n    1, \n' in text                # > 10 numbers: multi-line
    assert '  "heads": [\n    [0, 0, 0], \n' in text
    small = mx.sym.Activation(var("x"), act_type="relu", name="r")
    t = small.tojson()
    assert '"attrs": {"act_type": "relu"}, \n' in t                      # one key: inline
    assert '"arg_nodes": [0], \n  "node_row_ptr": [0, 1, 2], \n' in t
    assert t.endswith('"attrs": {\n    "is_np_shape": ["int", 1], \n'
                      '    "mxnet_version": ["int", 20000]\n  }\n}')
    q = var('we"ird\\name\n')
    assert '"name": "we\\"ird\\\\name\\n"' in q.tojson()
    back = load_json(t)
    assert back.list_outputs() == ["r_output"] and back.tojson() == t
    assert json.loads(t)["nodes"][1]["inputs"] == [[0, 0, 0]]


def test_rename_vars_copies_and_keeps_class():
    out = _bn_graph().as_np_ndarray()
    ren = rename_vars(out, {"fc_weight": "0.weight"})
    assert type(ren) is _Symbol and ren.list_inputs()[1] == "0.weight"
    assert out.list_inputs()[1] == "fc_weight"


def test_tracer_records_real_values_and_node_names():
    tracer = trace.Tracer()
    x = np.ones((2, 3))
    tracer.bind_var(x, "data", {"__profiler_scope__": "<unk>:"})
    with trace.tracing(tracer):
        assert trace.is_deferred_compute()
        y = mx.npx.relu(x) * 2
        assert float(y.sum()) == 12.0                      # values are real while tracing
    assert not trace.is_deferred_compute()
    sym = tracer.symbol([y])
    assert type(sym) is _Symbol
    nodes = [n for n in sym.topo() if not n.is_var]
    assert [n.opname for n in nodes] == ["_npx_relu", "_npi_multiply_scalar"]
    assert all(n.name.startswith("node_") for n in nodes)
    assert nodes[0].attrs.get("__profiler_scope__") == "<unk>:"      # legacy-path op
    assert "__profiler_scope__" not in nodes[1].attrs
    with trace.tracing(tracer), pytest.raises(mx.MXNetError, match="neither an input"):
        np.array(onp.ones((2, 3))) + y


def test_infer_shape_and_type_over_graph():
    out = _bn_graph()
    arg, outs, aux = out.infer_shape(data=(4, 5))
    assert arg[1] == (3, 5) and outs == [(4, 3)] and aux == [(3,), (3,)]
    args, outs, _ = out.infer_type(data=onp.float64)
    assert outs[0] == onp.float64


@pytest.mark.parametrize("name", fixture_names("mxnet-2.0.0b1"))
def test_mxnet2_exports_reserialise_byte_exact(name):
    path = FIXTURES / "mxnet-2.0.0b1" / f"{name}-symbol.json"
    assert load(str(path)).tojson() == path.read_text()
