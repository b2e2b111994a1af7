"""The summary's text table keeps its columns with long layer names; the demo models' layers
have names a reader can follow."""
from __future__ import annotations

import json

from serverproc import ROOT
from service.runtime.summary import render_text


def _summary(names: list[str]) -> dict:
    return {"inputs": [{"shape": [1, 3, 224, 224]}], "batch_size": 1,
            "layers": [{"name": n, "op": "Convolution", "output_shape": [1, 64, 112, 112],
                        "params": 9408} for n in names],
            "total_params": 9408 * len(names), "trainable_params": 9408 * len(names),
            "non_trainable_params": 0, "shared_params": 0, "unique_params": 9408 * len(names),
            "flops": 1, "flops_complete": True}


def _rows(text: str) -> list[str]:
    lines = text.splitlines()
    return lines[1:2] + lines[3:lines.index(lines[2], 3)]      # header + rows, between rules


def test_long_names_keep_the_columns():
    long = "resnetv10_stage4_residual_block_2_conv_fwd_with_a_very_long_suffix"
    text = render_text(_summary(["c0", long]))
    rows = _rows(text)
    assert len({len(r) for r in rows}) == 1, text               # every row the same width
    assert all(r.endswith(("Param #", "9408", " 0")) for r in rows)
    assert any(r.lstrip().startswith(long + "(Convolution)") for r in rows)
    rule = text.splitlines()[0]
    assert set(rule) == {"-"} and len(rule) == len(rows[0])


def test_short_names_keep_mxnets_80_columns():
    text = render_text(_summary(["conv0"]))
    assert text.splitlines()[0] == "-" * 80
    assert text.splitlines()[1] == f"{'Layer (type)':>20}  {'Output Shape':>42} {'Param #':>15}"


def test_demo_models_have_named_layers():
    for model, expected in (("mlp", ["dense0", "relu0", "dense1", "relu1", "dense2"]),
                            ("colors", ["pool0", "flatten0", "dense0", "softmax0"])):
        doc = json.loads((ROOT / f"model_store/{model}/1/{model}-symbol.json").read_text())
        assert [n["name"] for n in doc["nodes"] if n["op"] != "null"] == expected
    lenet = json.loads((ROOT / "model_store/lenet/1/lenet-symbol.json").read_text())
    assert not any(n["name"].startswith("node_") for n in lenet["nodes"])
