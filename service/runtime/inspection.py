"""Op-hook inspection: run one input through the model's plan with a hook on every op.

Uses the cached op's separate hooked loop (`run_hooked`), so the warm loop that serves
normal traffic is never touched. Each record summarises one op output (or input with
`monitor_all`): shape, dtype, min/max/mean/std over finite values, NaN/Inf counts, and
optionally the first values up to a cap.
"""
from __future__ import annotations

import re
from typing import Any, Callable

import numpy as np

from ..errors import BadRequest


def _matcher(pattern: str | None, regex: bool) -> Callable[[str, str], bool] | None:
    """The inspection filter (HTTP /inspect, `hybridserve inspect --filter`, the console): a
    substring, or with `regex` a regular expression searched for, in the node's name or its op;
    case-insensitive either way ("fullyconnected" finds FullyConnected, "^Node_0" node_0...)."""
    if not pattern:
        return None
    if regex:
        try:
            rx = re.compile(pattern, re.IGNORECASE)
        except re.error as e:
            raise BadRequest(f"invalid filter regex {pattern!r}: {e}") from None
        return lambda name, op: bool(rx.search(name) or rx.search(op))
    needle = pattern.casefold()
    return lambda name, op: needle in name.casefold() or needle in op.casefold()


def tensor_stats(name: str, op: str, arr: Any, include_values: bool, max_values: int) -> dict:
    a = np.asarray(arr)
    rec: dict[str, Any] = {"name": name, "op": op, "shape": list(a.shape), "dtype": str(a.dtype),
                           "size": int(a.size), "min": None, "max": None, "mean": None,
                           "std": None, "nan_count": 0, "inf_count": 0}
    if a.dtype.kind in "biuf" and a.size:
        x = a.astype(np.uint8) if a.dtype.kind == "b" else a
        if x.dtype.kind == "f":
            nan = int(np.count_nonzero(np.isnan(x)))
            inf = int(np.count_nonzero(np.isinf(x)))
            rec["nan_count"], rec["inf_count"] = nan, inf
            if nan or inf:
                x = x[np.isfinite(x)]
        if x.size:
            rec["min"] = float(x.min())
            rec["max"] = float(x.max())
            rec["mean"] = float(x.mean(dtype=np.float64))
            rec["std"] = float(x.std(dtype=np.float64))
    if include_values:
        flat = a.reshape(-1)
        vals = flat[:max_values]
        rec["values"] = ([v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v)
                          for v in vals] if a.dtype.kind in "OSU" else vals.tolist())
        rec["values_truncated"] = bool(flat.size > max_values)
    return rec


def inspect_model(runner, arrays: list[np.ndarray], params: dict, max_records: int,
                  hard_max_values: int) -> dict:
    """Run the hooked loop; `params` are the request's inspection parameters."""
    flt = params.get("filter")
    if flt is not None and not isinstance(flt, str):
        raise BadRequest("parameter 'filter' must be a string")
    regex = _bool(params, "regex", False)
    monitor_all = _bool(params, "monitor_all", False)
    include_values = _bool(params, "include_values", False)
    max_values = params.get("max_values", 1000)
    if not isinstance(max_values, int) or isinstance(max_values, bool) or max_values < 0:
        raise BadRequest("parameter 'max_values' must be a non-negative integer")
    max_values = min(max_values, hard_max_values)
    match = _matcher(flt, regex)
    records: list[dict] = []
    state = {"skipped": 0}

    def hook(name: str, op: str, arr) -> None:
        if match is not None and not match(name, op):
            return
        if len(records) >= max_records:
            state["skipped"] += 1
            return
        records.append(tensor_stats(name, op, arr, include_values, max_values))

    outs = runner.run_hooked(arrays, hook, monitor_all)
    outputs = [tensor_stats(spec.name, "output", o, include_values, max_values)
               for spec, o in zip(runner.outputs, outs)]
    return {"model_name": runner.name, "model_version": runner.version,
            "monitor_all": monitor_all, "filter": flt, "records": records,
            "records_truncated": state["skipped"] > 0, "records_skipped": state["skipped"],
            "outputs": outputs}


def _bool(params: dict, key: str, default: bool) -> bool:
    v = params.get(key, default)
    if isinstance(v, str) and v.lower() in ("true", "false", "1", "0"):
        return v.lower() in ("true", "1")
    if not isinstance(v, bool):
        raise BadRequest(f"parameter '{key}' must be a boolean")
    return v
