"""The recording machinery of `seed_examples_mx2.py` (run under real MXNet 2.0.0b1): a
notebook-like `Notebook` whose `step` runs one cell and appends its record (display, stdout,
warnings, error, native stderr, values) to `RECORDS`, and the normalisation applied before
the transcript is written. Importing it pins PYTHONHASHSEED (re-exec) and sets NumPy mode."""
import contextlib
import io
import os
import re
import sys
import tempfile
import textwrap
import warnings

# Some MXNet messages print Python sets (unused params, unknown inputs): make
# their order reproducible by pinning the hash seed (re-exec once).
if os.environ.get("PYTHONHASHSEED") != "0":
    os.environ["PYTHONHASHSEED"] = "0"
    os.execv(sys.executable, [sys.executable] + sys.argv)

import numpy as onp  # noqa: E402
import mxnet as mx  # noqa: E402
from mxnet import npx  # noqa: E402
from transcript_common import (ValueForms, normalize, run_cell,  # noqa: E402,F401
                               npz_members, npz_summary, qualname,
                               timing_filter)

npx.set_np()

RECORDS = []


# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------
def is_array(v):
    return isinstance(v, (mx.np.ndarray, mx.nd.NDArray))


def array_desc(v):
    d = {"array": qualname(type(v)), "shape": list(v.shape), "dtype": onp.dtype(v.dtype).name}
    try:
        d["device"] = str(v.device)
    except Exception:  # legacy NDArray has .context too
        d["device"] = str(v.context)
    return d


_forms = ValueForms(is_array, array_desc)
contains_array, describe, jsonable = _forms.contains_array, _forms.describe, _forms.jsonable
print_arg, nb_print = _forms.print_arg, _forms.nb_print


@contextlib.contextmanager
def capture_fd2():
    """Capture native stderr (MXNet C++ LOG lines)."""
    sys.stderr.flush()
    saved = os.dup(2)
    tmp = tempfile.TemporaryFile(mode="w+b")
    os.dup2(tmp.fileno(), 2)
    box = {}
    try:
        yield box
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
        tmp.seek(0)
        text = tmp.read().decode("utf-8", "replace")
        tmp.close()
        box["text"] = re.sub(r"^\[\d\d:\d\d:\d\d\] ", "[hh:mm:ss] ", text, flags=re.M)


PREAMBLE = """\
import mxnet as mx
from mxnet import np, npx, gluon
from mxnet.gluon import nn, HybridBlock, Parameter
"""


class Notebook:
    def __init__(self, source, preamble=None):
        self.source = source
        self.ns = {"__name__": "__main__", "print": nb_print}
        if preamble:
            exec(compile(preamble, "<preamble>", "exec"), self.ns)

    def step(self, id_, code, extra=(), note=None, stdout_filter=None, source=None):
        code = textwrap.dedent(code).strip("\n") + "\n"
        rec = {"id": id_, "source": source or self.source, "code": code}
        record = {}
        self.ns["record"] = record
        out = io.StringIO()
        with capture_fd2() as native, warnings.catch_warnings(record=True) as wlist:
            warnings.simplefilter("always")
            with contextlib.redirect_stdout(out):
                ran = run_cell(self.ns, code, id_, describe, extra)
                sys.stdout.flush()
        err, values = ran.get("error"), ran["values"]
        if "error_where" in ran:
            rec["error_where"] = ran["error_where"]
        if "display" in ran:
            rec["display"] = ran["display"]
        text = out.getvalue()
        if stdout_filter:
            text = stdout_filter(text)
        if text:
            rec["stdout"] = text
        rec["warnings"] = [{"category": qualname(w.category), "message": str(w.message)} for w in wlist]
        rec["error"] = err
        if native.get("text"):
            rec["stderr"] = native["text"]
        values.update(jsonable(record))
        if values:
            rec["values"] = values
        if note:
            rec["note"] = note
        RECORDS.append(rec)
        status = "ERR " + err["type"] if err else "ok"
        sys.__stderr__.write(f"[{status:>30}] {id_}\n")
        return rec
