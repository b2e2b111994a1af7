"""Recording logic of `tests/interop/seed_recorder.py` (the seed-transcript recorder), ported to hybridserve's framework.

The recorder ran every record under real MXNet 2.0.0b1; this module runs the same code under
`framework` and captures the same fields the same way (display, stdout with arrays replaced by
`<ndarray shape=... dtype=...>`, warnings, error, values), so the replay test can compare them.
"""
from __future__ import annotations

import ast
import builtins
import contextlib
import io
import os
import textwrap
import traceback
import warnings

import numpy as onp

import framework as mx
from interop.transcript_common import (MAX_MSG, error_desc, normalize, npz_members,  # noqa: F401
                                       npz_summary, qualname, timing_filter)

def is_array(v) -> bool:
    return isinstance(v, mx.np.ndarray)


def array_desc(v) -> dict:
    return {"array": qualname(type(v)), "shape": list(v.shape), "dtype": onp.dtype(v.dtype).name,
            "device": str(v.device)}


def contains_array(v, depth: int = 0) -> bool:
    if depth > 5:
        return False
    if is_array(v):
        return True
    if isinstance(v, (list, tuple)):
        return any(contains_array(i, depth + 1) for i in v)
    if isinstance(v, dict):
        return any(contains_array(i, depth + 1) for i in v.values())
    return False


def describe(v):
    """Display form of a value: repr unless arrays are involved."""
    if is_array(v):
        return array_desc(v)
    if isinstance(v, (list, tuple)) and contains_array(v):
        return {"type": qualname(type(v)), "items": [describe(i) for i in v]}
    if isinstance(v, dict) and contains_array(v):
        return {"type": qualname(type(v)), "items": {str(k): describe(i) for k, i in v.items()}}
    return {"type": qualname(type(v)), "repr": repr(v)}


def jsonable(v, depth: int = 0):
    if depth > 8:
        return repr(v)
    if v is None or isinstance(v, (bool, int, str, float)):
        return v
    if is_array(v):
        return array_desc(v)
    if isinstance(v, (list, tuple)):
        return [jsonable(i, depth + 1) for i in v]
    if isinstance(v, dict):
        return {str(k): jsonable(i, depth + 1) for k, i in v.items()}
    if isinstance(v, onp.generic):
        return v.item()
    return repr(v)


def print_arg(a):
    if is_array(a):
        d = array_desc(a)
        return f"<ndarray shape={tuple(d['shape'])} dtype={d['dtype']}>"
    return a


def nb_print(*args, **kwargs):
    builtins.print(*[print_arg(a) for a in args], **kwargs)


PREAMBLE = """\
import framework as mx
from framework import np, npx, gluon
from framework.gluon import nn, HybridBlock, Parameter
"""


class Notebook:
    """One namespace per source document, like the recorder's notebook."""

    def __init__(self, preamble: str | None = None):
        self.ns = {"__name__": "__main__", "print": nb_print}
        if preamble:
            exec(compile(preamble, "<preamble>", "exec"), self.ns)

    def step(self, id_: str, code: str, extra=()) -> dict:
        code = textwrap.dedent(code).strip("\n") + "\n"
        rec: dict = {"id": id_}
        record: dict = {}
        self.ns["record"] = record
        values: dict = {}
        out = io.StringIO()
        err = None
        display, has_display = None, False
        with warnings.catch_warnings(record=True) as wlist:
            warnings.simplefilter("always")
            with contextlib.redirect_stdout(out):
                try:
                    tree = ast.parse(code)
                    last = None
                    if tree.body and isinstance(tree.body[-1], ast.Expr):
                        last = ast.Expression(tree.body.pop().value)
                    exec(compile(tree, f"<{id_}>", "exec"), self.ns)
                    if last is not None:
                        val = eval(compile(last, f"<{id_}>", "eval"), self.ns)
                        if val is not None:
                            display, has_display = describe(val), True
                except Exception as e:  # noqa: BLE001 - record everything
                    err = error_desc(e)
                    tb = traceback.extract_tb(e.__traceback__)
                    rec["error_where"] = [f"{f.name}:{os.path.basename(f.filename)}" for f in tb[-3:]]
                if err is None:
                    for expr in extra:
                        try:
                            values[expr] = describe(eval(expr, self.ns))
                        except Exception as e:  # noqa: BLE001
                            values[expr] = {"error": error_desc(e)}
        if has_display:
            rec["display"] = display
        text = timing_filter(out.getvalue())
        if text:
            rec["stdout"] = text
        rec["warnings"] = [{"category": qualname(w.category), "message": str(w.message)} for w in wlist]
        rec["error"] = err
        values.update(jsonable(record))
        if values:
            rec["values"] = values
        return normalize(rec)
