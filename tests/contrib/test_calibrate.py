"""Calibration statistics against MXNet 1.9.1's own (tests/fixtures/quantization/entropy.npz,
recorded by tests/interop/gen_quant_refs.py): the entropy collector's widened histograms and the
threshold/divergence its `_get_optimal_threshold` picks."""
from __future__ import annotations

import os

import numpy as np
import pytest

from framework.contrib.quantization.calibrate import (CalibrationError, Histogram,
                                                      entropy_range, optimal_threshold,
                                                      smooth_distribution)
from framework.contrib.quantization.collectors import (_LayerHistogramCollector,
                                                       _LayerOutputMinMaxCollector)

FIX = os.path.join(os.path.dirname(__file__), "..", "fixtures", "quantization", "entropy.npz")
REF = np.load(FIX)
CASES = sorted({k.split("/")[0] for k in REF})


def _histogram(case: str) -> Histogram:
    batches = sorted(k for k in REF if k.startswith(case + "/batch"))
    h = Histogram(REF[batches[0]])
    for b in batches[1:]:
        h.add(REF[b])
    return h


@pytest.mark.parametrize("case", CASES)
def test_histogram_widens_like_mxnet(case):
    h = _histogram(case)
    np.testing.assert_array_equal(h.hist, REF[f"{case}/hist"])
    np.testing.assert_allclose(h.edges, REF[f"{case}/edges"], rtol=1e-6)
    np.testing.assert_allclose([h.min, h.max, h.th], REF[f"{case}/range"], rtol=1e-6)


FAST = [("normal", "int8"), ("relu", "auto"), ("relu", "int8"), ("skewed", "uint8")]
SLOW = [(c, d) for c in CASES for d in ("int8", "uint8", "auto") if (c, d) not in FAST]


def _check_threshold(case, dtype):
    h = _histogram(case)
    lo, hi = entropy_range(h, dtype)
    t = REF[f"{case}/{dtype}/threshold"].item()
    assert hi == pytest.approx(t, rel=1e-6)
    assert lo == (0.0 if h.min >= 0 and dtype != "int8" else -hi)
    unsigned = h.min >= 0 and dtype != "int8"
    _, d = optimal_threshold(h.hist, h.edges, 511 if unsigned else 255)
    assert d == pytest.approx(REF[f"{case}/{dtype}/divergence"].item(), rel=1e-5)


@pytest.mark.parametrize("case,dtype", FAST)
def test_entropy_threshold_is_mxnets(case, dtype):
    _check_threshold(case, dtype)


@pytest.mark.slow
@pytest.mark.parametrize("case,dtype", SLOW)
def test_entropy_threshold_is_mxnets_all(case, dtype):
    _check_threshold(case, dtype)


def test_smoothing_moves_mass_to_zero_bins():
    p = np.array([0, 4, 0, 6], np.float32)
    s = smooth_distribution(p)
    assert (s > 0).all() and s.sum() == pytest.approx(10.0)
    assert smooth_distribution(np.zeros(5, np.float32)) is None


def test_bad_histogram_is_refused():
    with pytest.raises(CalibrationError, match="odd number of bins"):
        optimal_threshold(np.ones(8000), np.linspace(-1, 1, 8001))


def test_collectors_accumulate_over_batches():
    mm = _LayerOutputMinMaxCollector("int8", include_layers=["x"])
    hc = _LayerHistogramCollector("int8", num_bins=801, include_layers=["x"])
    for b in (np.array([-1.0, 2.0]), np.array([0.5, 3.0]), np.array([-4.0, 0.0])):
        for c in (mm, hc):
            c.collect("x", "Convolution", b)
            c.collect("y", "Convolution", b)       # not an included layer: ignored
    assert mm.post_collect() == {"x": (-4.0, 3.0)}
    hist, edges, lo, hi, th = hc.hist_dict["x"]
    assert hist.sum() == 6 and (lo, hi) == (-4.0, 3.0) and th >= 4.0 and len(edges) == len(hist) + 1
    assert set(hc.hist_dict) == {"x"}
