"""Run the committed real-MXNet fixture models (tests/fixtures/mxnet-*) through the graph compiler."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

FIXTURES = Path(__file__).parent / "fixtures"
VERSIONS = ("mxnet-1.9.1", "mxnet-2.0.0b1")


def fixture_names(version: str) -> list[str]:
    d = FIXTURES / version
    return sorted(p.name[: -len("-symbol.json")] for p in d.glob("*-symbol.json"))


def load_fixture(version: str, name: str):
    """(symbol, params without arg:/aux: prefixes, inputs dict, expected outputs list)."""
    from framework.io.params_file import load_params, strip_prefixes
    from framework.symbol import load

    d = FIXTURES / version
    sym = load(str(d / f"{name}-symbol.json"))
    params = strip_prefixes(load_params(str(d / f"{name}-0000.params")))
    io = np.load(d / f"{name}-io.npz")
    inputs = {k: io[k] for k in io.files if k.startswith("data")}
    outs = sorted((k for k in io.files if k.startswith("output")),
                  key=lambda k: int(k[6:] or 0))
    return sym, params, inputs, [io[k] for k in outs]


def run_fixture(version: str, name: str):
    """Run a fixture graph with the plan executor; returns (outputs, expected)."""
    from framework.compiler import Plan

    sym, params, inputs, expected = load_fixture(version, name)
    names = sym.list_inputs()
    feed = {**params, **inputs}
    plan = Plan(sym, names)
    outs = plan.run([np.asarray(feed[n]) for n in names])
    return [np.asarray(o) for o in outs], expected


def manifest(version: str) -> dict:
    return json.loads((FIXTURES / version / "manifest.json").read_text())
