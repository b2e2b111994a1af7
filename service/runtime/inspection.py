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


_RECORD_BYTES = 320             # a record's JSON without values: names, shape, statistics


def _value_bytes(a: np.ndarray, n: int) -> int:
    """About how many bytes the first `n` values of `a` take in the JSON response."""
    if not n:
        return 0
    if a.dtype.kind in "OSU":
        return sum((len(v) if isinstance(v, (bytes, str)) else 24) + 4
                   for v in a.reshape(-1)[:n].tolist())
    kind = a.dtype.kind
    if kind in "iu":
        v = a.reshape(-1)[:n]
        return n * (1 + max(len(str(int(v.min()))), len(str(int(v.max())))))
    return n * (6 if kind == "b" else 22)          # floats: up to 17 digits, sign, exponent


class ResponseBudget:
    """Refuses an inspection whose response would pass `limit` bytes (0: no limit), estimated
    from each record's value count before the record is built."""

    def __init__(self, limit: int, name: str, max_values: int):
        self.limit, self.name, self.max_values, self.total = limit, name, max_values, 0

    def charge(self, rec_name: str, a: np.ndarray, include_values: bool) -> None:
        n = min(a.size, self.max_values) if include_values else 0
        self.total += _RECORD_BYTES + len(rec_name) + _value_bytes(a, n)
        if self.limit and self.total > self.limit:
            raise BadRequest(
                f"inspection of model '{self.name}' would answer more than {self.limit} bytes "
                f"(inspect_max_response_bytes; about {self.total} by record '{rec_name}'): "
                f"narrow it with parameter 'filter' (a node name or op), a smaller "
                f"'max_values' (now {self.max_values}) or without 'include_values'")


def _hooked(runner, arrays: list[np.ndarray], match, max_records: int, monitor_all: bool,
            keep: Callable[[str, str, np.ndarray], None]) -> tuple[list, int]:
    """Run the hooked loop handing `keep` each matching op output, at most `max_records`;
    (model outputs, records skipped)."""
    kept = skipped = 0

    def hook(name: str, op: str, arr) -> None:
        nonlocal kept, skipped
        if match is not None and not match(name, op):
            return
        if kept >= max_records:
            skipped += 1
            return
        kept += 1
        keep(name, op, np.asarray(arr))

    return runner.run_hooked(arrays, hook, monitor_all), skipped


def inspect_model(runner, arrays: list[np.ndarray], params: dict, max_records: int,
                  hard_max_values: int, max_response_bytes: int = 0) -> dict:
    """Run the hooked loop; `params` are the request's inspection parameters. A response that
    would pass `max_response_bytes` (0: no limit) is refused before it is built: with values,
    a first pass only measures (a second forward, but no value is copied for a refused one)."""
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
    budget = ResponseBudget(max_response_bytes, runner.name, max_values)

    def charge_outputs(outs) -> None:
        for spec, o in zip(runner.outputs, outs):
            budget.charge(spec.name, np.asarray(o), include_values)

    if include_values and max_response_bytes:
        outs, _ = _hooked(runner, arrays, match, max_records, monitor_all,
                          lambda name, op, a: budget.charge(name, a, True))
        charge_outputs(outs)
        budget.total = 0
    records: list[dict] = []

    def keep(name: str, op: str, a: np.ndarray) -> None:
        budget.charge(name, a, include_values)
        records.append(tensor_stats(name, op, a, include_values, max_values))

    outs, skipped = _hooked(runner, arrays, match, max_records, monitor_all, keep)
    charge_outputs(outs)
    outputs = [tensor_stats(spec.name, "output", o, include_values, max_values)
               for spec, o in zip(runner.outputs, outs)]
    return {"model_name": runner.name, "model_version": runner.version,
            "monitor_all": monitor_all, "filter": flt, "records": records,
            "records_truncated": skipped > 0, "records_skipped": skipped, "outputs": outputs}


def _bool(params: dict, key: str, default: bool) -> bool:
    v = params.get(key, default)
    if isinstance(v, str) and v.lower() in ("true", "false", "1", "0"):
        return v.lower() in ("true", "1")
    if not isinstance(v, bool):
        raise BadRequest(f"parameter '{key}' must be a boolean")
    return v
