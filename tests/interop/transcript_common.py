"""What the seed-transcript recorder (`seed_recorder.py`, under real MXNet 2.0.0b1) and its port
to hybridserve (`tests/gluon/transcript_capture.py`) record the same way, whatever the
framework: exception descriptions, .npz summaries and the normalisation of run-to-run noise.
NumPy and the standard library only, so that both sides import this one copy."""
from __future__ import annotations

import builtins
import re
import zipfile

import numpy as onp

MAX_MSG = 6000


def qualname(t) -> str:
    mod = getattr(t, "__module__", "")
    if mod in ("builtins", None, ""):
        return t.__qualname__
    return f"{mod}.{t.__qualname__}"


def error_desc(e: BaseException) -> dict:
    msg = str(e)
    if len(msg) > MAX_MSG:
        msg = msg[:MAX_MSG] + "...<truncated>"
    mro = [qualname(c) for c in type(e).__mro__ if c not in (object, BaseException)]
    return {"type": qualname(type(e)), "message": msg, "mro": mro}


def npz_members(path: str) -> list:
    with zipfile.ZipFile(path) as z:
        return [i.filename for i in z.infolist()]


def npz_summary(path: str) -> list:
    out = []
    with onp.load(path) as f:
        for name in npz_members(path):
            key = name[:-4] if name.endswith(".npy") else name
            a = f[key]
            out.append([name, list(a.shape), str(a.dtype)])
    return out


_ADDR = re.compile(r" at 0x[0-9a-f]+")
_UUID = re.compile(r"[0-9a-f]{8}[-_][0-9a-f]{4}[-_][0-9a-f]{4}[-_][0-9a-f]{4}[-_][0-9a-f]{12}")


def map_strings(v, fn):
    """`fn` applied to every string of a JSON-like value (lists and dict values, recursively)."""
    if isinstance(v, str):
        return fn(v)
    if isinstance(v, list):
        return [map_strings(i, fn) for i in v]
    if isinstance(v, dict):
        return {k: map_strings(i, fn) for k, i in v.items()}
    return v


def normalize(v):
    """Remove run-to-run noise: object addresses and uuid-based variable names."""
    return map_strings(v, lambda s: _UUID.sub("<uuid>", _ADDR.sub(" at 0x...", s)))


def timing_filter(text: str) -> str:
    return re.sub(r"\d+\.\d+ sec", "<t> sec", text)


class ValueForms:
    """How a recorded value is shown (notebook display, JSON, print arguments), given how the
    framework at hand recognises and describes its arrays: arrays become their description
    (random values differ run to run), everything else its repr or JSON value."""

    def __init__(self, is_array, array_desc):
        self.is_array, self.array_desc = is_array, array_desc

    def contains_array(self, v, depth: int = 0) -> bool:
        if depth > 5:
            return False
        if self.is_array(v):
            return True
        if isinstance(v, (list, tuple)):
            return any(self.contains_array(i, depth + 1) for i in v)
        if isinstance(v, dict):
            return any(self.contains_array(i, depth + 1) for i in v.values())
        return False

    def describe(self, v):
        """Display form of a value: repr unless arrays are involved."""
        if self.is_array(v):
            return self.array_desc(v)
        if isinstance(v, (list, tuple)) and self.contains_array(v):
            return {"type": qualname(type(v)), "items": [self.describe(i) for i in v]}
        if isinstance(v, dict) and self.contains_array(v):
            return {"type": qualname(type(v)),
                    "items": {str(k): self.describe(i) for k, i in v.items()}}
        return {"type": qualname(type(v)), "repr": repr(v)}

    def jsonable(self, v, depth: int = 0):
        if depth > 8:
            return repr(v)
        if v is None or isinstance(v, (bool, int, str, float)):
            return v
        if self.is_array(v):
            return self.array_desc(v)
        if isinstance(v, (list, tuple)):
            return [self.jsonable(i, depth + 1) for i in v]
        if isinstance(v, dict):
            return {str(k): self.jsonable(i, depth + 1) for k, i in v.items()}
        if isinstance(v, onp.generic):
            return v.item()
        return repr(v)

    def print_arg(self, a):
        if self.is_array(a):
            d = self.array_desc(a)
            return f"<ndarray shape={tuple(d['shape'])} dtype={d['dtype']}>"
        return a

    def nb_print(self, *args, **kwargs):
        builtins.print(*[self.print_arg(a) for a in args], **kwargs)


def run_cell(ns: dict, code: str, id_: str, describe, extra=()) -> dict:
    """Run one notebook cell in `ns` like a notebook does (the value of a trailing expression is
    displayed) and return what it showed: `display` (if any), `error` and `error_where` (if it
    raised), `values` of the `extra` expressions (when it did not). The caller owns stdout,
    warnings and stderr capture around it."""
    import ast
    import os
    import traceback
    res: dict = {"values": {}}
    try:
        tree = ast.parse(code)
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last = ast.Expression(tree.body.pop().value)
        exec(compile(tree, f"<{id_}>", "exec"), ns)
        if last is not None:
            val = eval(compile(last, f"<{id_}>", "eval"), ns)
            if val is not None:
                res["display"] = describe(val)
    except BaseException as e:  # noqa: BLE001 - record everything a cell can raise
        if isinstance(e, KeyboardInterrupt):
            raise
        res["error"] = error_desc(e)
        tb = traceback.extract_tb(e.__traceback__)
        res["error_where"] = [f"{f.name}:{os.path.basename(f.filename)}" for f in tb[-3:]]
        return res
    for expr in extra:
        try:
            res["values"][expr] = describe(eval(expr, ns))
        except Exception as e:  # noqa: BLE001
            res["values"][expr] = {"error": error_desc(e)}
    return res
