"""MXNet 1.9.1's own bfloat16 exports (tests/fixtures/mxnet-1.9.1-bf16/, written by
tests/interop/gen_amp_fixtures.py with `mx.contrib.amp.convert_hybrid_block`) load and run here,
and our `convert_symbol` of the same float32 graphs makes MXNet's graphs node for node.

MXNet could not run its bf16 exports on the CPU that made the fixtures (no avx512_bf16: oneDNN
refuses bf16 convolutions), so outputs are checked against MXNet's float32 output under the bf16
bound max|Δ| ≤ 1e-2·max(1, max|ref|); where a fixture holds MXNet's bf16 output, against that."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import framework as mx
from framework import symbol as S
from framework.base import BFLOAT16
from framework.contrib import amp
from framework.gluon import SymbolBlock
from framework.io import load_params

FIX = Path(__file__).resolve().parent.parent / "fixtures" / "mxnet-1.9.1-bf16"
CASES = {"convnet_bf16": False, "convnet_bf16_castparams": True, "resnet_bf16": False}


def _nodes(graph: dict) -> list:
    """(op, name, attrs without dunders but the bf16 flag, inputs) per node."""
    ns = graph["nodes"]
    return [(n["op"], n["name"],
             sorted((k, v) for k, v in (n.get("attrs") or {}).items()
                    if not k.startswith("__") or (k == "__dtype__" and v == "12")),
             [(ns[i[0]]["name"], i[1]) for i in n["inputs"]]) for n in ns]


@pytest.mark.parametrize("name", CASES)
def test_convert_symbol_makes_mxnets_graph(name):
    sym = S.load(str(FIX / f"{name}_fp32-symbol.json"))
    ours = amp.convert_symbol(sym, "bfloat16", data_names=["data"],
                              cast_optional_params=CASES[name])
    theirs = json.loads((FIX / f"{name}-full-symbol.json").read_text())
    assert _nodes(json.loads(ours.tojson(remove_amp_cast=False))) == _nodes(theirs)


def _check(y: np.ndarray, io) -> None:
    ref = io["output"] if "output" in io else io["float_output"]
    bound = 1e-2 * max(1.0, float(np.abs(ref).max()))
    assert np.abs(y - ref).max() <= bound


@pytest.mark.parametrize("backend", ["numpy", "onnxruntime"])
@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("graph", ["full", "exported"])
def test_mxnet_bf16_export_runs_here(name, graph, backend):
    sym = FIX / (f"{name}-full-symbol.json" if graph == "full" else f"{name}-symbol.json")
    params = FIX / f"{name}-0000.params"
    io = np.load(FIX / f"{name}-io.npz")
    x = mx.np.array(io["data"])
    net = SymbolBlock.imports(str(sym), ["data"], str(params))
    if backend == "numpy":
        net.hybridize(backend="numpy")
    else:
        net.optimize_for(x, backend="onnxruntime")
    _check(net(x).asnumpy(), io)


def test_mxnet_bf16_parameters_are_flag_12_and_held_exactly():
    name = "convnet_bf16_castparams"
    saved = load_params(str(FIX / f"{name}-0000.params"))
    low = sorted(k for k, v in saved.items() if v.dtype == BFLOAT16)
    assert low == ["arg:conv1_bias", "arg:conv1_weight", "arg:dense1_bias", "arg:dense1_weight"]
    net = SymbolBlock.imports(str(FIX / f"{name}-full-symbol.json"), ["data"],
                              str(FIX / f"{name}-0000.params"))
    w = net.collect_params()["conv1_weight"]
    assert w._bf16 and w.data().asnumpy().dtype == np.float32
    bits = saved["arg:conv1_weight"]["bfloat16"].astype(np.uint32) << 16
    np.testing.assert_array_equal(w.data().asnumpy(), bits.view(np.float32))


@pytest.mark.parametrize("name", CASES)
def test_default_export_drops_the_casts_as_mxnet_does(name):
    sym = S.load(str(FIX / f"{name}_fp32-symbol.json"))
    ours = amp.convert_symbol(sym, "bfloat16", data_names=["data"],
                              cast_optional_params=CASES[name])
    theirs = json.loads((FIX / f"{name}-symbol.json").read_text())   # remove_amp_cast=True
    assert _nodes(json.loads(ours.tojson())) == _nodes(theirs)


@pytest.mark.parametrize("name", CASES)
def test_convert_hybrid_block_of_the_float32_export_matches_mxnet(name):
    pre = str(FIX / f"{name}_fp32")
    net = SymbolBlock.imports(pre + "-symbol.json", ["data"], pre + "-0000.params")
    io = np.load(FIX / f"{name}-io.npz")
    net.hybridize(backend="numpy")
    net(mx.np.array(io["data"]))
    block = amp.convert_hybrid_block(net, "bfloat16", cast_optional_params=CASES[name])
    sym, _ = block.export(None, remove_amp_cast=False)
    theirs = json.loads((FIX / f"{name}-full-symbol.json").read_text())
    assert _nodes(json.loads(sym.tojson(remove_amp_cast=False))) == _nodes(theirs)
    block.hybridize(backend="numpy")
    _check(block(mx.np.array(io["data"])).asnumpy(), io)
