"""Recording logic of `tests/interop/seed_recorder.py` (the seed-transcript recorder), ported to hybridserve's framework.

The recorder ran every record under real MXNet 2.0.0b1; this module runs the same code under
`framework` and captures the same fields the same way (display, stdout with arrays replaced by
`<ndarray shape=... dtype=...>`, warnings, error, values), so the replay test can compare them.
"""
from __future__ import annotations

import contextlib
import io
import textwrap
import warnings

import numpy as onp

import framework as mx
from interop.transcript_common import (ValueForms, normalize, run_cell,  # noqa: F401
                                       npz_members, npz_summary, qualname,
                                       timing_filter)

def is_array(v) -> bool:
    return isinstance(v, mx.np.ndarray)


def array_desc(v) -> dict:
    return {"array": qualname(type(v)), "shape": list(v.shape), "dtype": onp.dtype(v.dtype).name,
            "device": str(v.device)}


_forms = ValueForms(is_array, array_desc)
contains_array, describe, jsonable = _forms.contains_array, _forms.describe, _forms.jsonable
print_arg, nb_print = _forms.print_arg, _forms.nb_print


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
        out = io.StringIO()
        with warnings.catch_warnings(record=True) as wlist:
            warnings.simplefilter("always")
            with contextlib.redirect_stdout(out):
                ran = run_cell(self.ns, code, id_, describe, extra)
        err, values = ran.get("error"), ran["values"]
        if "error_where" in ran:
            rec["error_where"] = ran["error_where"]
        if "display" in ran:
            rec["display"] = ran["display"]
        text = timing_filter(out.getvalue())
        if text:
            rec["stdout"] = text
        rec["warnings"] = [{"category": qualname(w.category), "message": str(w.message)} for w in wlist]
        rec["error"] = err
        values.update(jsonable(record))
        if values:
            rec["values"] = values
        return normalize(rec)
