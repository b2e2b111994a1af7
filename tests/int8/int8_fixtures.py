"""Shared by the INT8 tests: the fixtures real MXNet 1.9.1 quantized and exported
(tests/fixtures/mxnet-1.9.1-int8/, written by tests/interop/gen_int8_fixtures.py) and the bound
within which hybridserve must reproduce MXNet's INT8 outputs."""
from __future__ import annotations

from pathlib import Path

import numpy as np

import framework as fw
from framework import gluon
from framework.io.params_file import load_params, split_arg_aux
from framework.symbol import json_io

FIXTURES = Path(__file__).parents[1] / "fixtures" / "mxnet-1.9.1-int8"
NAMES = sorted(p.name[:-len("-symbol.json")] for p in FIXTURES.glob("*-symbol.json"))


def paths(name: str) -> tuple[str, str, np.lib.npyio.NpzFile]:
    return (str(FIXTURES / f"{name}-symbol.json"), str(FIXTURES / f"{name}-0000.params"),
            np.load(FIXTURES / f"{name}-io.npz"))


def imports(name: str) -> tuple[gluon.SymbolBlock, np.ndarray, np.lib.npyio.NpzFile]:
    sym, params, io = paths(name)
    return gluon.SymbolBlock.imports(sym, ["data"], params), io["data"], io


def internals(name: str) -> dict[str, np.ndarray]:
    """Every output of every node of the exported graph, by MXNet's output name, run by
    hybridserve's executor on the fixture's input."""
    sym_file, params_file, io = paths(name)
    sym = json_io.load(sym_file)
    inner = sym.get_internals()
    names = [n for n in inner.list_outputs() if f"internal:{n}" in io.files]
    group = fw.symbol.Group([inner[n] for n in names])
    args, aux = split_arg_aux(load_params(params_file))
    used = set(group.list_arguments())
    args = {k: fw.np.array(v, dtype=v.dtype) for k, v in args.items() if k in used}
    args["data"] = fw.np.array(io["data"])
    aux = {k: fw.np.array(v, dtype=v.dtype) for k, v in aux.items()}
    outs = group.bind(fw.cpu(), args, aux_states=aux).forward()
    return {n: o.asnumpy() for n, o in zip(names, outs)}


def level_step(lo: float, hi: float, dtype) -> float:
    """The real value of one level of a tensor of `dtype` over [lo, hi] (MXNet's 127.5/255.5)."""
    levels = 127.5 if np.dtype(dtype) == np.int8 else 255.5
    return max(abs(lo), abs(hi)) / levels


def output_bound(name: str) -> float:
    """How far the float output may be from MXNet's: 2 levels of a dequantized output; for a
    float-output INT8 dense layer, inputs off by up to 2 levels move output i by at most
    2 · step · Σ_j |W_ij| (W its dequantized weights)."""
    sym_file, params_file, io = paths(name)
    sym = json_io.load(sym_file)
    last = sym.outputs[0][0]
    src, _ = last.inputs[0]
    # MXNet's names of the input's (data, min, max) outputs
    data, lo, hi = (io[f"internal:{n}"] for n in sym.get_internals().list_outputs()
                    if n.startswith(f"{src.name}_"))
    x, lo, hi = data, float(lo[0]), float(hi[0])
    if last.opname == "_contrib_dequantize":
        return 2 * level_step(lo, hi, x.dtype)
    params, _ = split_arg_aux(load_params(params_file))
    wname = last.inputs[1][0].name
    w = params[wname].astype(np.float64)
    if w.dtype != np.float32 and f"{wname}_min" in params:
        w *= max(abs(params[f"{wname}_min"][0]), abs(params[f"{wname}_max"][0])) / 127.0
    return 2 * level_step(lo, hi, x.dtype) * float(np.abs(w).sum(axis=1).max())


def node_by_node(name: str) -> dict[str, np.ndarray]:
    """Each op node's outputs computed by its registry kernel from MXNet's recorded values of its
    inputs (a kernel's own precision, without differences carried from earlier nodes)."""
    sym_file, params_file, io = paths(name)
    sym = json_io.load(sym_file)
    params = {k: np.asarray(v) for d in split_arg_aux(load_params(params_file)) for k, v in d.items()}
    names = {}
    for out in sym.get_internals().outputs:
        names.setdefault(id(out[0]), []).append(fw.symbol.Symbol([out]).list_outputs()[0])
    recorded = {k[len("internal:"):]: io[k] for k in io.files if k.startswith("internal:")}
    ours = {}
    for n in sym.topo():
        if n.is_var:
            continue
        ins = [params.get(src.name, io["data"]) if src.is_var else recorded.get(names[id(src)][i])
               for src, i in n.inputs]
        if any(v is None for v in ins):
            continue
        outs = n.op.kernel(n.parsed, *ins)
        outs = outs if isinstance(outs, tuple) else (outs,)
        ours.update({k: v for k, v in zip(names[id(n)], outs) if k in recorded})
    return ours
