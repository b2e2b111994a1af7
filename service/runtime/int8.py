"""INT8 serving: a model whose config asks `quantize: {...}` is quantized at load by MXNet's
`quantize_net` (framework/contrib/quantization) on the calibration inputs shipped beside it,
then checked against its float32 graph on those same inputs. The agreement (top-1 agreement
of the last axis where outputs are class scores, max|Δ|) goes into the model's metadata and
the console; the Runner then serves the INT8 graph like any other (ONNX Runtime twin first)."""
from __future__ import annotations

import logging
import zipfile

import numpy as np

from framework.base import MXNetError
from framework.contrib.quantization import quantize_net
from framework.ndarray import ndarray

from ..errors import BadRequest
from ..repository.config import QuantizeConfig
from ..repository.store import ModelFiles
from .transforms import beside

log = logging.getLogger("hybridserve.int8")
CALIB_BATCH = 8
MAX_CALIB_BYTES = 512 << 20


def read_calibration(model: str, q: QuantizeConfig, files: ModelFiles,
                     names: list[str]) -> list[np.ndarray]:
    """One float32 array per data input (first axis = examples) from the `.npz` calib_file."""
    p = beside(files, q.calib_file)
    if p is None:
        raise BadRequest(f"model '{model}': quantize.calib_file '{q.calib_file}' is in neither "
                         "the version directory nor the model directory")
    if p.stat().st_size > MAX_CALIB_BYTES:
        raise BadRequest(f"model '{model}': calibration file over {MAX_CALIB_BYTES} bytes")
    try:
        with np.load(p, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    except (OSError, ValueError, zipfile.BadZipFile) as e:
        raise BadRequest(f"model '{model}': calibration file '{q.calib_file}' is not a "
                         f"readable .npz: {e}") from None
    picked = [arrays[n] for n in names if n in arrays]
    if len(picked) != len(names):
        picked = list(arrays.values())[:len(names)]
    if len(picked) != len(names) or any(a.ndim == 0 or a.dtype.kind not in "fiu" for a in picked):
        raise BadRequest(f"model '{model}': calibration file '{q.calib_file}' needs one numeric "
                         f"array per input {names} (first axis = examples), has "
                         f"{ {k: list(v.shape) for k, v in arrays.items()} }")
    if len({a.shape[0] for a in picked}) != 1 or picked[0].shape[0] == 0:
        raise BadRequest(f"model '{model}': calibration arrays disagree on the number of "
                         "examples or hold none")
    return [a.astype(np.float32) for a in picked]


def _batches(arrays: list[np.ndarray]) -> list[tuple]:
    n = arrays[0].shape[0]
    return [tuple(a[i:i + CALIB_BATCH] for a in arrays) for i in range(0, n, CALIB_BATCH)]


def _run(block, arrays: list[np.ndarray]) -> list[np.ndarray]:
    outs = []
    for batch in _batches(arrays):
        o = block(*[ndarray(a) for a in batch])
        outs.append([x.asnumpy() for x in (o if isinstance(o, (list, tuple)) else [o])])
    return [np.concatenate(parts) for parts in zip(*outs)]


def agreement(got: list[np.ndarray], want: list[np.ndarray]) -> dict[str, float]:
    """max|Δ| over all outputs; top-1 agreement of the first output when it is (N, classes)."""
    report = {"quantize_max_abs_diff": float(max(np.max(np.abs(g - w)) for g, w in zip(got, want)))}
    g, w = got[0], want[0]
    if w.ndim == 2 and w.shape[1] > 1:
        report["quantize_top1_agreement"] = float(np.mean(g.argmax(1) == w.argmax(1)))
    return report


def quantize_for_serving(model: str, block, q: QuantizeConfig, files: ModelFiles,
                         names: list[str]):
    """(the INT8 block, its report for metadata). BadRequest naming the model when the config
    or calibration data cannot be used."""
    arrays = read_calibration(model, q, files, names)
    try:
        qblock = quantize_net(block, quantized_dtype=q.dtype, calib_mode=q.calib_mode,
                              calib_data=_batches(arrays), exclude_layers=list(q.exclude_layers),
                              num_calib_examples=q.num_calib_examples,
                              data_shapes=[a[:CALIB_BATCH].shape for a in arrays])
        qblock.hybridize(static_alloc=True, static_shape=True, backend="numpy")
        report = agreement(_run(qblock, arrays), _run(block, arrays))
    except (MXNetError, ValueError, KeyError, TypeError) as e:
        raise BadRequest(f"model '{model}': INT8 quantization failed: {e}"[:2000]) from None
    report = {"quantized": q.dtype, "quantize_calib_mode": q.calib_mode,
              "quantize_calib_examples": int(arrays[0].shape[0]), **report}
    log.info("%s quantized to INT8 (%s calibration on %d examples): %s", model, q.calib_mode,
             arrays[0].shape[0], ", ".join(f"{k}={v:.4g}" for k, v in report.items()
                                           if isinstance(v, float)))
    return qblock, report
