"""Calibration statistics, as MXNet 1.9.1 defines them (`contrib/quantization.py` and its
`_contrib_calibrate_entropy` operator).

* naive: the min and max of each layer output over the calibration examples;
* entropy: an 8001-bin symmetric histogram of each layer output (widened batch by batch
  so that earlier counts keep their bins), then the threshold `t` whose clipped distribution
  over `[-t, t]` loses least information (KL divergence) when merged into 255 quantized bins
  (511 for a non-negative output quantized to uint8).

The arithmetic follows MXNet's: bin counts merge as integers, distributions are float32,
zero bins are smoothed with eps = 1e-4 taken from the non-zero ones.
"""
from __future__ import annotations

import numpy as np

NUM_BINS = 8001
NUM_QUANTIZED_BINS = 255


class CalibrationError(ValueError):
    """A calibration statistic cannot be computed (no examples, malformed histogram)."""


class Histogram:
    """A layer output's symmetric histogram over [-th, th], widened as wider batches arrive."""

    __slots__ = ("hist", "edges", "min", "max", "th")

    def __init__(self, arr: np.ndarray, num_bins: int = NUM_BINS):
        self.min, self.max = float(np.min(arr)), float(np.max(arr))
        self.th = max(abs(self.min), abs(self.max))
        self.hist, self.edges = np.histogram(arr, bins=num_bins, range=(-self.th, self.th))

    @classmethod
    def from_tuple(cls, t: tuple) -> "Histogram":
        """From MXNet's (hist, edges, min, max, th) tuple."""
        h = cls.__new__(cls)
        h.hist, h.edges = np.asarray(t[0]), np.asarray(t[1])
        h.min, h.max, h.th = (float(v) for v in t[2:5])
        return h

    def as_tuple(self) -> tuple:
        return self.hist, self.edges, self.min, self.max, self.th

    def add(self, arr: np.ndarray) -> None:
        lo, hi = float(np.min(arr)), float(np.max(arr))
        th = max(abs(lo), abs(hi))
        self.min, self.max = min(self.min, lo), max(self.max, hi)
        n = len(self.hist)
        if th <= self.th:
            self.hist = self.hist + np.histogram(arr, bins=n, range=(-self.th, self.th))[0]
            return
        # grow by whole old-width bins on both sides so the old counts keep their bins
        step = 2 * self.th / n
        half = int((th - self.th) // step + 1)
        self.th = half * step + self.th
        hist, self.edges = np.histogram(arr, bins=n + 2 * half, range=(-self.th, self.th))
        hist[half:half + n] += self.hist
        self.hist = hist


def smooth_distribution(p: np.ndarray, eps: float = 1e-4) -> np.ndarray | None:
    """Replace zero bins by eps, taking the same mass off the non-zero bins; None when the
    distribution is all zeros or too sparse to smooth (MXNet then scores it +inf)."""
    zeros = p == 0
    n_zeros = int(zeros.sum())
    n_nonzeros = p.size - n_zeros
    if not n_nonzeros:
        return None
    eps1 = np.float32(eps * n_zeros / n_nonzeros)
    if eps1 >= 1.0:
        return None
    return (p + np.where(zeros, np.float32(eps), -eps1)).astype(np.float32)


def _divergence(hist: np.ndarray, i: int, num_quantized_bins: int) -> float:
    """KL(p‖q) for the threshold at bin distance `i` from the centre bin."""
    zero = len(hist) // 2
    start, stop = zero - i, zero + i + 1
    sliced = hist[start:stop].copy()
    p = sliced.astype(np.float32)
    p[0] = hist[:start + 1].sum()                 # outliers clipped into the edge bins
    p[-1] = hist[stop - 1:].sum()
    sliced[0] = 0                                 # q leaves out the left edge bin (as MXNet)
    merged = len(sliced) // num_quantized_bins
    groups = np.arange(len(sliced)) // merged
    groups[groups >= num_quantized_bins] = num_quantized_bins - 1
    qbins = np.bincount(groups, weights=sliced, minlength=num_quantized_bins)
    norm = np.bincount(groups, weights=(sliced != 0), minlength=num_quantized_bins)
    per = np.divide(qbins, norm, out=np.zeros_like(qbins), where=norm != 0).astype(np.float32)
    q = np.where(p != 0, per[groups], np.float32(0)).astype(np.float32)
    p, q = smooth_distribution(p), smooth_distribution(q)
    if p is None or q is None:
        return float("inf")
    # MXNet sums in float32 left to right; cumsum keeps that order (sum() would pair terms),
    # which decides between thresholds whose divergences differ in the sixth digit
    p = p / _seq_sum(p)
    q = q / _seq_sum(q)
    return float(_seq_sum(p * np.log(p / q)))


def _seq_sum(x: np.ndarray) -> np.float32:
    return np.cumsum(x, dtype=np.float32)[-1]


def optimal_threshold(hist: np.ndarray, edges: np.ndarray,
                      num_quantized_bins: int = NUM_QUANTIZED_BINS) -> tuple[float, float]:
    """(threshold, divergence): the histogram edge minimising KL divergence (first on ties)."""
    n = len(hist)
    if n % 2 != 1 or len(edges) != n + 1:
        raise CalibrationError(f"a calibration histogram needs an odd number of bins and "
                               f"one more edge, got {n} bins and {len(edges)} edges")
    hist = np.asarray(hist).astype(np.int64)
    edges = np.asarray(edges, np.float32)
    best_i, best = num_quantized_bins // 2, float(np.finfo(np.float32).max)
    for i in range(num_quantized_bins // 2, n // 2 + 1):
        d = _divergence(hist, i, num_quantized_bins)
        if d < best:
            best, best_i = d, i
    return float(edges[n // 2 + best_i + 1]), best


def entropy_threshold(h: Histogram, quantized_dtype: str,
                      num_quantized_bins: int = NUM_QUANTIZED_BINS) -> tuple[float, float, bool]:
    """(threshold, divergence, unsigned): a non-negative output quantized to uint8 ('auto' or
    'uint8') is merged into 2n+1 quantized bins and gets the range (0, t), else (-t, t)."""
    unsigned = h.min >= 0 and quantized_dtype in ("auto", "uint8")
    bins = num_quantized_bins * 2 + 1 if unsigned else num_quantized_bins
    t, d = optimal_threshold(h.hist, h.edges, bins)
    return t, d, unsigned


def entropy_range(h: Histogram, quantized_dtype: str,
                  num_quantized_bins: int = NUM_QUANTIZED_BINS) -> tuple[float, float]:
    """MXNet's (min, max) calibration range from a histogram."""
    t, _, unsigned = entropy_threshold(h, quantized_dtype, num_quantized_bins)
    return (0.0, t) if unsigned else (-t, t)
