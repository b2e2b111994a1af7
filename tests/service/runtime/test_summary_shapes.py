"""A summary is computed at the input shapes it is given (`shape=data:1,3,224,224`, the CLI's
`--shape`, the console's "Input shape") or declared in the config, and says when a shape is
unknown instead of guessing one (issue 26, defect 10: a config-less ResNet-18 was summarised
at a 1x1 input, 23.4 MFLOPs, without a word)."""
from __future__ import annotations

import json

import httpx
import numpy as np
import pytest

from fixture_util import FIXTURES
from serverproc import copy_store, inproc_server
from service.cli import main
from service.errors import BadRequest
from service.repository.store import ModelStore
from service.runtime.runner import Runner
from service.runtime.summary import render_text

MX1 = FIXTURES / "mxnet-1.9.1"


@pytest.fixture(scope="module")
def nocfg(tmp_path_factory):
    """lenet (28x28 conv net) with and without its config.json."""
    store = copy_store(tmp_path_factory.mktemp("sum") / "store", ("lenet",))
    st = ModelStore(store, create=False)
    with_cfg = Runner.load("lenet", "1", st.files("lenet", "1"), st.read_config("lenet"))
    (store / "lenet" / "config.json").unlink()
    return store, with_cfg, Runner.load("lenet", "1", st.files("lenet", "1"), None)


def test_unknown_shapes_are_said_not_guessed(nocfg):
    _, with_cfg, bare = nocfg
    s = bare.summary(1)
    assert s["inputs"][0]["shape"] is None and s["layers"][0]["output_shape"] is None
    assert not s["flops_complete"]
    assert len(s["warnings"]) == 1 and "shape=data:1,1,N,N" in s["warnings"][0]
    assert s["total_params"] == with_cfg.summary(1)["total_params"] > 0   # counts never depend
    assert "Warning: input 'data'" in render_text(s)
    ref = with_cfg.summary(2)
    given = bare.summary(2, {"data": (2, 1, 28, 28)})
    assert given["warnings"] == [] and given["flops"] == ref["flops"] > 0
    assert [r["output_shape"] for r in given["layers"]] == [r["output_shape"] for r in ref["layers"]]
    for bad in ({"data": (1, 3, 28, 28)}, {"data": (1, 28, 28)}):      # lenet takes 1 channel
        with pytest.raises(BadRequest, match="does not fit input 'data'"):
            bare.summary(1, bad)


def test_summary_endpoint_takes_a_shape(nocfg):
    store, with_cfg, _ = nocfg
    with inproc_server(store) as srv, httpx.Client(base_url=srv.url, timeout=60) as c:
        s = c.get("/v2/models/lenet/summary").json()
        assert s["warnings"] and s["inputs"][0]["shape"] is None
        s = c.get("/v2/models/lenet/summary", params={"shape": "data:4,1,28,28"}).json()
        assert s["warnings"] == [] and s["flops"] == with_cfg.summary(4)["flops"]
        assert c.get("/v2/models/lenet/summary",               # one input: the name may go
                     params={"shape": "4,1,28,28"}).json()["flops"] == s["flops"]
        text = c.get("/v2/models/lenet/summary", params={"format": "text"}).text
        assert "Warning: input 'data'" in text
        for bad in ("nosuch:1,1,28,28", "data:1,x", "data:0,1,28,28", "data:1,3,28,28"):
            r = c.get("/v2/models/lenet/summary", params={"shape": bad})
            assert r.status_code == 400, (bad, r.text)


def test_cli_summary_takes_a_shape(capsys):
    """The config-less 1.x ResNet export: unknown without --shape, computed with it."""
    fx = ["--symbol", str(MX1 / "mini_resnet_v1-symbol.json"),
          "--params", str(MX1 / "mini_resnet_v1-0000.params")]
    x = np.load(MX1 / "mini_resnet_v1-io.npz")["data"]
    assert main(["summary", *fx, "--json", "-q"]) == 0
    out = capsys.readouterr()
    s = json.loads(out.out)
    assert s["warnings"] and "warning: input" in out.err and not s["flops_complete"]
    shape = ",".join(map(str, x.shape))
    assert main(["summary", *fx, "--json", "-q", "--shape", f"data:{shape}"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["warnings"] == [] and s["flops_complete"] and s["inputs"][0]["shape"] == list(x.shape)
    assert main(["summary", *fx, "-q", "--shape", "data:1,2"]) == 1
