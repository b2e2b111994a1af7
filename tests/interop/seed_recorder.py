"""The recording machinery of `seed_examples_mx2.py` (run under real MXNet 2.0.0b1): a
notebook-like `Notebook` whose `step` runs one cell and appends its record (display, stdout,
warnings, error, native stderr, values) to `RECORDS`, and the normalisation applied before
the transcript is written. Importing it pins PYTHONHASHSEED (re-exec) and sets NumPy mode."""
import ast
import contextlib
import io
import os
import re
import sys
import tempfile
import textwrap
import traceback
import warnings

# Some MXNet messages print Python sets (unused params, unknown inputs): make
# their order reproducible by pinning the hash seed (re-exec once).
if os.environ.get("PYTHONHASHSEED") != "0":
    os.environ["PYTHONHASHSEED"] = "0"
    os.execv(sys.executable, [sys.executable] + sys.argv)

import numpy as onp  # noqa: E402
import mxnet as mx  # noqa: E402
from mxnet import npx  # noqa: E402
from transcript_common import (ValueForms, error_desc, normalize,  # noqa: E402,F401
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
        values = {}
        out = io.StringIO()
        err = None
        display = None
        has_display = False
        with capture_fd2() as native, warnings.catch_warnings(record=True) as wlist:
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
                except BaseException as e:  # noqa: BLE001 - record everything
                    if isinstance(e, KeyboardInterrupt):
                        raise
                    err = error_desc(e)
                    tb = traceback.extract_tb(e.__traceback__)
                    rec["error_where"] = [f"{f.name}:{os.path.basename(f.filename)}" for f in tb[-3:]]
                if err is None:
                    for expr in extra:
                        try:
                            values[expr] = describe(eval(expr, self.ns))
                        except Exception as e:  # noqa: BLE001
                            values[expr] = {"error": error_desc(e)}
                sys.stdout.flush()
        if has_display:
            rec["display"] = display
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
