"""MXNet 2.0's calibration collectors (`CalibrationCollector` and its naive / entropy forms).

A collector sees every monitored layer output as `collect(name, op_name, arr)` — only the
names in `include_layers` (the entries the quantized graph needs a range for; None: all) —
and `post_collect()` turns what it saw into `{name: (min, max)}`. `quantize_net`'s
`calib_mode='custom'` takes a user's subclass as `LayerOutputCollector`.
"""
from __future__ import annotations

import logging
from typing import Any

import numpy as np

from .calibrate import NUM_BINS, NUM_QUANTIZED_BINS, Histogram, entropy_threshold
from .data import as_numpy
from .errors import QuantizationError

HistTuple = tuple   # MXNet's (hist, edges, min, max, th)


class CalibrationCollector:
    """Base class: subclasses implement `collect`; `post_collect` returns `min_max_dict`."""

    def __init__(self):
        self.include_layers: list[str] | None = None
        self.min_max_dict: dict[str, tuple[float, float]] = {}

    def collect(self, name: str, op_name: str, arr: Any) -> None:
        raise NotImplementedError(f"{type(self).__name__}.collect")

    def post_collect(self) -> dict[str, tuple[float, float]]:
        return self.min_max_dict

    def _wants(self, name: str) -> bool:
        return self.include_layers is None or name in self.include_layers


class _LayerOutputMinMaxCollector(CalibrationCollector):
    """Naive calibration: each layer output's running (min, max)."""

    def __init__(self, quantized_dtype: str = "auto", include_layers=None,
                 logger: logging.Logger | None = None):
        super().__init__()
        self.quantized_dtype, self.include_layers, self.logger = \
            quantized_dtype, include_layers, logger

    def collect(self, name: str, op_name: str, arr: Any) -> None:
        if not self._wants(name):
            return
        arr = as_numpy(arr)
        lo, hi = float(np.min(arr)), float(np.max(arr))
        old = self.min_max_dict.get(name)
        self.min_max_dict[name] = (lo, hi) if old is None else (min(old[0], lo), max(old[1], hi))
        if self.logger:
            self.logger.debug("Collecting layer %s min_range=%s, max_range=%s", name, lo, hi)


class _LayerHistogramCollector(CalibrationCollector):
    """Entropy calibration: each layer output's symmetric histogram, then per layer the
    KL-optimal threshold."""

    def __init__(self, quantized_dtype: str = "auto", num_bins: int = NUM_BINS,
                 include_layers=None, logger: logging.Logger | None = None):
        super().__init__()
        self.hist_dict: dict[str, HistTuple] = {}
        self.quantized_dtype, self.num_bins = quantized_dtype, num_bins
        self.include_layers, self.logger = include_layers, logger

    def collect(self, name: str, op_name: str, arr: Any) -> None:
        if not self._wants(name):
            return
        arr = as_numpy(arr)
        old = self.hist_dict.get(name)
        if old is None:
            self.hist_dict[name] = Histogram(arr, self.num_bins).as_tuple()
        else:
            lo, hi = float(np.min(arr)), float(np.max(arr))
            self.hist_dict[name] = self.combine_histogram(old, arr, lo, hi, max(abs(lo), abs(hi)))

    def post_collect(self) -> dict[str, tuple[float, float]]:
        return self.get_optimal_thresholds(self.hist_dict, self.quantized_dtype,
                                           logger=self.logger)

    @staticmethod
    def combine_histogram(old_hist: HistTuple, arr, new_min, new_max, new_th) -> HistTuple:
        """`old_hist` with `arr` counted in, widened by whole bins when `arr` reaches further
        (new_min / new_max / new_th: `arr`'s own, as MXNet passes them)."""
        h = Histogram.from_tuple(old_hist)
        h.add(as_numpy(arr))
        return h.as_tuple()

    @staticmethod
    def get_optimal_threshold(hist_data: HistTuple, quantized_dtype: str,
                              num_quantized_bins: int = NUM_QUANTIZED_BINS) -> tuple:
        """(min, max, threshold, divergence) of one layer's histogram."""
        h = Histogram.from_tuple(hist_data)
        t, d, _ = entropy_threshold(h, quantized_dtype, num_quantized_bins)
        return h.min, h.max, t, d

    @staticmethod
    def get_optimal_thresholds(hist_dict: dict[str, HistTuple], quantized_dtype: str,
                               num_quantized_bins: int = NUM_QUANTIZED_BINS,
                               logger: logging.Logger | None = None) -> dict:
        """{name: (min, max)} for every histogram (each is dropped once read, as MXNet does)."""
        if logger:
            logger.info("Calculating optimal thresholds for quantization using KL divergence "
                        "with num_quantized_bins=%d", num_quantized_bins)
        out = {}
        for name in list(hist_dict):
            h = Histogram.from_tuple(hist_dict.pop(name))
            t, d, unsigned = entropy_threshold(h, quantized_dtype, num_quantized_bins)
            out[name] = (0.0, t) if unsigned else (-t, t)
            if logger:
                logger.debug("layer=%s, min_val=%s, max_val=%s, th=%s, divergence=%s",
                             name, h.min, h.max, t, d)
        return out


def make_collector(calib_mode: str, quantized_dtype: str, layers: list[str], custom,
                   logger: logging.Logger | None = None):
    """The collector for a calib_mode: naive / entropy built in; 'custom' (MXNet 2.0) a user's
    CalibrationCollector, given `layers` unless it names its own; 'customize' (1.9.1) a user's
    object with `collect(name, array)` and `min_max_dict`, as it is."""
    if calib_mode == "naive":
        return _LayerOutputMinMaxCollector(quantized_dtype, include_layers=layers, logger=logger)
    if calib_mode == "entropy":
        return _LayerHistogramCollector(quantized_dtype, include_layers=layers, logger=logger)
    if calib_mode == "customize" and custom is not None:
        return custom
    if calib_mode != "custom":
        raise QuantizationError(f"unknown calibration mode {calib_mode!r}, expected 'none', "
                                "'naive', 'entropy' or 'custom'")
    if not isinstance(custom, CalibrationCollector):
        raise QuantizationError("calib_mode='custom' needs a CalibrationCollector as "
                                f"LayerOutputCollector, got {type(custom).__name__}")
    if custom.include_layers is None:
        custom.include_layers = layers
    return custom
