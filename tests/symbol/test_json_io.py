"""Symbol JSON: every fixture loads and round-trips; legacy layouts upgrade; hostile files fail fast."""
import json
import time

import pytest

from fixture_util import FIXTURES, VERSIONS, fixture_names
from framework.base import GraphFormatError
from framework.symbol import load, load_json
from framework.symbol.json_io import to_json

ALL = [(v, n) for v in VERSIONS for n in fixture_names(v)]


@pytest.mark.parametrize("version,name", ALL)
def test_fixture_loads_and_round_trips(version, name):
    path = FIXTURES / version / f"{name}-symbol.json"
    sym = load(str(path))
    doc = json.loads(path.read_text())
    assert len(sym.outputs) == len(doc["heads"])
    again = load_json(sym.tojson())
    assert again.list_inputs() == sym.list_inputs()
    assert again.list_arguments() == sym.list_arguments()
    assert again.list_auxiliary_states() == sym.list_auxiliary_states()
    assert again.list_outputs() == sym.list_outputs()
    assert [n.opname for n in again.topo()] == [n.opname for n in sym.topo()]


def test_aux_states_of_batchnorm():
    sym = load(str(FIXTURES / "mxnet-1.9.1" / "mini_resnet_v1-symbol.json"))
    aux = sym.list_auxiliary_states()
    assert aux and all(a.endswith(("running_mean", "running_var")) for a in aux)
    assert not set(aux) & set(sym.list_arguments())


def _legacy_doc():
    # a 0.8-era graph: `param`/`attr` keys, 2-element entries, BatchNorm without moving stats
    return {
        "nodes": [
            {"op": "null", "param": {}, "name": "data", "inputs": [], "backward_source_id": -1,
             "attr": {"ctx_group": "stage1", "lr_mult": "0.2"}},
            {"op": "null", "param": {}, "name": "fc1_weight", "inputs": [], "backward_source_id": -1,
             "attr": {"ctx_group": "stage1", "wd_mult": "0.3", "weight_lr_mult": "1.2"}},
            {"op": "null", "param": {}, "name": "fc1_bias", "inputs": [], "backward_source_id": -1},
            {"op": "FullyConnected", "param": {"no_bias": "False", "num_hidden": "128"},
             "name": "fc1", "inputs": [[0, 0], [1, 0], [2, 0]], "backward_source_id": -1,
             "attr": {"ctx_group": "stage1", "wd_mult": "0.3", "weight_lr_mult": "1.2"}},
            {"op": "null", "param": {}, "name": "batchnorm0_gamma", "inputs": [], "backward_source_id": -1},
            {"op": "null", "param": {}, "name": "batchnorm0_beta", "inputs": [], "backward_source_id": -1},
            {"op": "BatchNorm", "param": {"eps": "0.001", "fix_gamma": "True", "momentum": "0.9",
                                          "use_global_stats": "False"},
             "name": "batchnorm0", "inputs": [[3, 0], [4, 0], [5, 0]], "backward_source_id": -1},
        ],
        "arg_nodes": [0, 1, 2, 4, 5],
        "heads": [[6, 0]],
    }


def test_legacy_upgrade_adds_aux_inputs_and_moves_hidden_keys():
    sym = load_json(json.dumps(_legacy_doc()))
    assert sym.list_auxiliary_states() == ["batchnorm0_moving_mean", "batchnorm0_moving_var"]
    nodes = {n.name: n for n in sym.topo()}
    assert nodes["data"].attrs["__lr_mult__"] == "0.2"
    assert nodes["fc1_weight"].attrs["__lr_mult__"] == "1.2"
    assert nodes["batchnorm0_moving_mean"].attrs["__init__"] == '["zero", {}]'
    assert nodes["batchnorm0_moving_var"].attrs["__init__"] == '["one", {}]'
    # re-saving writes the current layout
    doc = json.loads(to_json(sym))
    assert all("attr" not in n and "param" not in n for n in doc["nodes"])
    assert all(len(e) == 3 for n in doc["nodes"] for e in n["inputs"])
    assert doc["attrs"]["mxnet_version"] == ["int", 20000]


def test_later_attr_key_wins():
    doc = _legacy_doc()
    text = json.dumps(doc).replace('"attr": {"ctx_group": "stage1", "lr_mult": "0.2"}',
                                   '"attr": {"lr_mult": "0.2"}, "attrs": {"lr_mult": "0.5"}')
    sym = load_json(text)
    assert {n.name: n for n in sym.topo()}["data"].attrs["__lr_mult__"] == "0.5"


def _mlp_doc():
    return json.loads((FIXTURES / "mxnet-2.0.0b1" / "mlp3_sequential-symbol.json").read_text())


HOSTILE = {
    "not json": b"{nodes: [",
    "not an object": b"[1, 2, 3]",
    "unknown top-level key": None,
    "dangling input": None,
    "forward reference (cycle)": None,
    "self reference": None,
    "head out of range": None,
    "negative index": None,
    "bad entry type": None,
    "unknown field in node": None,
    "attrs not strings": None,
    "bad version": None,
    "var with inputs": None,
    "no heads": None,
}


def _mutate(kind):
    doc = _mlp_doc()
    nodes = doc["nodes"]
    last = len(nodes) - 1
    if kind == "unknown top-level key":
        doc["foo"] = 1
    elif kind == "dangling input":
        nodes[last]["inputs"][0] = [10_000, 0, 0]
    elif kind == "forward reference (cycle)":
        nodes[3]["inputs"][0] = [last, 0, 0]
    elif kind == "self reference":
        nodes[last]["inputs"][0] = [last, 0, 0]
    elif kind == "head out of range":
        doc["heads"] = [[len(nodes) + 5, 0, 0]]
    elif kind == "negative index":
        nodes[last]["inputs"][0] = [-1, 0, 0]
    elif kind == "bad entry type":
        nodes[last]["inputs"][0] = ["0", 0, 0]
    elif kind == "unknown field in node":
        nodes[0]["bogus"] = 1
    elif kind == "attrs not strings":
        nodes[3]["attrs"] = {"num_hidden": [1, 2]}
    elif kind == "bad version":
        doc["attrs"]["mxnet_version"] = 10901
    elif kind == "var with inputs":
        nodes[0]["inputs"] = [[0, 0, 0]]
    elif kind == "no heads":
        doc["heads"] = []
    return json.dumps(doc).encode()


@pytest.mark.parametrize("kind", list(HOSTILE))
def test_hostile_json_is_refused_quickly(kind):
    text = HOSTILE[kind] if HOSTILE[kind] is not None else _mutate(kind)
    t0 = time.perf_counter()
    with pytest.raises(GraphFormatError):
        load_json(text)
    assert time.perf_counter() - t0 < 1.0


def test_unknown_op_names_node_and_nearest():
    doc = _mlp_doc()
    op_nodes = [n for n in doc["nodes"] if n["op"] != "null"]
    op_nodes[0]["op"] = "FullyConnectd"
    with pytest.raises(GraphFormatError) as e:
        load_json(json.dumps(doc))
    msg = str(e.value)
    assert "FullyConnectd" in msg and op_nodes[0]["name"] in msg and "FullyConnected" in msg


def test_limits():
    doc = _mlp_doc()
    with pytest.raises(GraphFormatError, match="limit"):
        load_json(json.dumps(doc), max_nodes=3)
    with pytest.raises(GraphFormatError, match="limit"):
        load_json(json.dumps(doc), max_bytes=100)


def test_deep_nesting_is_refused():
    with pytest.raises(GraphFormatError):
        load_json("[" * 100_000 + "]" * 100_000)


def test_bad_attr_value_names_node():
    doc = _mlp_doc()
    op_nodes = [n for n in doc["nodes"] if n["op"] == "FullyConnected"]
    op_nodes[0]["attrs"]["num_hidden"] = "many"
    with pytest.raises(Exception) as e:
        load_json(json.dumps(doc))
    assert op_nodes[0]["name"] in str(e.value) and "num_hidden" in str(e.value)
