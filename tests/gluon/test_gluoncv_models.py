"""GluonCV networks exported by real GluonCV 0.10.5 / MXNet 1.9.1 (tests/fixtures/gluoncv, see
tests/interop/gen_gluoncv.py) load through `SymbolBlock.imports` and give MXNet's outputs.

Detectors: the same kept detections in the same order (class ids equal, scores and boxes within
the deep-net bound); every network: max|Δ| ≤ 1e-4·max(1, max|ref|). The large networks run with
`-m interop` (`pytest -m interop tests/gluon/test_gluoncv_models.py`)."""
from __future__ import annotations

import numpy as np
import pytest

from gluoncv_recipe import MODELS, fixture_models, run_fixture

DETECTORS = {"ssd", "yolo3", "faster_rcnn", "center_net"}


def _params():
    out = []
    for name in fixture_models():
        marks = [pytest.mark.interop, pytest.mark.slow] if MODELS[name].get("interop") else []
        out.append(pytest.param(name, marks=marks, id=name))
    return out


def _bound(ref: np.ndarray) -> float:
    finite = np.abs(ref[np.isfinite(ref)])
    return 1e-4 * max(1.0, float(finite.max()) if finite.size else 1.0)


@pytest.mark.parametrize("name", _params())
def test_matches_real_gluoncv(name, tmp_path):
    outs, refs = run_fixture(name, tmp_path)
    assert len(outs) == len(refs)
    if any(name.startswith(d) for d in DETECTORS):
        ids, scores, boxes = outs
        rids, rscores, rboxes = refs
        kept = rscores.reshape(-1) >= 0
        assert kept.sum() >= 5, "fixture should keep several detections"
        np.testing.assert_array_equal(ids, rids)             # same detections, same order
        np.testing.assert_array_equal(scores < 0, rscores < 0)
    for o, r in zip(outs, refs):
        assert o.shape == r.shape and o.dtype == r.dtype
        assert np.abs(o.astype(np.float64) - r).max() <= _bound(r)
