"""GluonCV networks exported by real GluonCV 0.10.5 / MXNet 1.9.1 (tests/fixtures/gluoncv, see
tests/interop/gen_gluoncv.py) load through `SymbolBlock.imports` and give MXNet's outputs.

Detectors: the same kept detections in the same order (class ids equal, scores and boxes within
the deep-net bound); every network: max|Δ| ≤ 1e-4·max(1, max|ref|). The large networks run with
`-m interop` (`pytest -m interop tests/gluon/test_gluoncv_models.py`)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from gluoncv_recipe import MODELS, fixture_models, make_input, run_fixture

DETECTORS = {"ssd", "yolo3", "faster_rcnn", "mask_rcnn", "center_net"}


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
        ids, scores, boxes = outs[:3]               # Mask R-CNN adds its masks
        rids, rscores, rboxes = refs[:3]
        kept = rscores.reshape(-1) >= 0
        assert kept.sum() >= 5, "fixture should keep several detections"
        np.testing.assert_array_equal(ids, rids)             # same detections, same order
        np.testing.assert_array_equal(scores < 0, rscores < 0)
    for o, r in zip(outs, refs):
        assert o.shape == r.shape and o.dtype == r.dtype
        assert np.abs(o.astype(np.float64) - r).max() <= _bound(r)


def test_1x_export_keeps_what_mxnet_191_requires(tmp_path):
    """slice_axis(end=None) must be written (1.9.1 requires `end`); zeros_like's dtype, which
    1.9.1 ignores as hybridserve does, is left out instead of failing the export."""
    from framework.gluon import SymbolBlock
    from gluoncv_recipe import FIXTURE_DIR, write_params

    nodes = {}
    for name in ("ssd_300_mobilenet0.25_voc", "center_net_resnet18_v1b_voc"):
        write_params(name, tmp_path / f"{name}.params")
        blk = SymbolBlock.imports(str(FIXTURE_DIR / f"{name}-symbol.json"), ["data"],
                                  str(tmp_path / f"{name}.params"))
        blk.hybridize()
        blk(__import__("framework").np.array(make_input(MODELS[name]["shape"])))
        blk.export(str(tmp_path / name), format="1.x")
        graph = json.loads((tmp_path / f"{name}-symbol.json").read_text())
        nodes.update({n["name"]: n for n in graph["nodes"]})
    assert nodes["ssd0_multiperclassdecoder0_slice_axis0"]["attrs"]["end"] == "None"
    assert "dtype" not in nodes["centernet0_centernetdecoder0_zeros_like0"].get("attrs", {})
    nms = nodes["ssd0_box_nms0"]
    assert nms["op"] == "_contrib_box_nms" and nms["attrs"]["overlap_thresh"] == "0.45"
