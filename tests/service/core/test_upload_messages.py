"""Upload errors a newcomer can act on: no params file sent, an unknown form field, swapped or
wrong files named by the user's file name and what they look like; `GET /` opens the console."""
from __future__ import annotations

import json

import pytest

from fixture_util import FIXTURES
from serverproc import STORE

MX1 = FIXTURES / "mxnet-1.9.1"
SYM = ("fc_flatten-symbol.json", (MX1 / "fc_flatten-symbol.json").read_bytes())
PARAMS = ("fc_flatten-0000.params", (MX1 / "fc_flatten-0000.params").read_bytes())
URL = "/v2/repository/models/msg_test/upload"


def error(r) -> str:
    assert r.status_code == 400, r.text
    return r.json()["error"]


def test_symbol_without_params_says_none_was_sent(http):
    msg = error(http.post(URL, files={"symbol": SYM}))
    assert "no params file was given" in msg and "model0_dense0_weight" in msg


def test_a_gluon_export_without_params_gets_the_same_400(http):
    """Issue 26, defect 12: the demo MLP's symbol (2.x names `0.weight`, with `__shape__`,
    `__init__`, `__lr_mult__` on its weights) alone was 201 READY, demanding 6 weights as inputs."""
    sym = ("mlp-symbol.json", (STORE / "mlp" / "1" / "mlp-symbol.json").read_bytes())
    msg = error(http.post(URL, files={"symbol": sym}))
    assert "no params file was given" in msg and "'0.weight'" in msg and "'2.bias'" in msg
    assert "'data'" not in msg
    # the attributes alone decide, whatever the names are
    doc = json.loads(sym[1])
    for n in doc["nodes"]:
        if n["op"] == "null" and n["name"] != "data":
            n["name"] = f"w{n['name'].replace('.', '')}"
    msg = error(http.post(URL, files={"symbol": ("m-symbol.json", json.dumps(doc))}))
    assert "no params file was given" in msg and "'w0weight'" in msg
    # unless the config names them as inputs (here: every one of them, a weight-less graph)
    names = [n["name"] for n in doc["nodes"] if n["op"] == "null"]
    cfg = {"inputs": [{"name": n, "datatype": "FP32"} for n in names]}
    r = http.post("/v2/repository/models/msg_test_inputs/upload",
                  files={"symbol": ("m-symbol.json", json.dumps(doc)),
                         "config": ("config.json", json.dumps(cfg))})
    assert r.status_code == 201, r.text


def test_unknown_field_lists_the_expected_ones(http):
    msg = error(http.post(URL, files={"symbol": SYM, "parameters": PARAMS}))
    assert "unexpected upload fields ['parameters']" in msg
    for field in ("'symbol'", "'params'", "'config'", "'version'"):
        assert field in msg


def test_swapped_files_are_named_and_described(http):
    msg = error(http.post(URL, files={"symbol": (PARAMS[0], PARAMS[1]),
                                      "params": (SYM[0], SYM[1])}))
    assert "field 'symbol' got 'fc_flatten-0000.params'" in msg
    assert "MXNet 1.x params file" in msg and "swapped" in msg
    assert "msg_test-symbol.json" not in msg                  # not the server's own name


@pytest.mark.parametrize("files, needles", [
    ({"symbol": SYM, "params": ("weights.bin", b"\x00\x01garbage" * 4)},
     ["field 'params' got 'weights.bin'", "unrecognised data"]),
    ({"symbol": SYM, "params": ("fc-0000.params", SYM[1])},
     ["field 'params' got 'fc-0000.params'", "a JSON document", "swapped"]),
    ({"symbol": ("model.json", b"PK\x03\x04rest"), "params": PARAMS},
     ["field 'symbol' got 'model.json'", "npz"]),
    ({"symbol": ("empty.json", b""), "params": PARAMS}, ["'empty.json'", "an empty file"]),
])
def test_wrong_files(http, files, needles):
    msg = error(http.post(URL, files=files))
    for n in needles:
        assert n in msg, msg


def test_root_redirects_to_the_console(http):
    r = http.get("/", follow_redirects=False)
    assert r.status_code == 307 and r.headers["location"].endswith("ui/")
    assert http.get("/", follow_redirects=True).headers["content-type"].startswith("text/html")
    assert http.get("/v2").json()["name"]                     # the API root stays /v2
