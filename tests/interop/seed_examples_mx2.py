#!/usr/bin/env python
"""Run every code example of the two seed documents under REAL MXNet 2.0.0b1
and record what MXNet shows, as a JSON transcript used as a reference fixture.

Usage (from the repo root):

    bash tests/interop/setup_mxnet_venv.sh 2.0.0b1
    .mxnet-venvs/mxnet-2.0.0b1/bin/python tests/interop/seed_examples_mx2.py \
        tests/fixtures/seed_transcript_mx2.json

Layout: this script writes the transcript; `seed_recorder.py` runs a cell and records it;
the cells are in `seed_cells_docs.py` (the seeds), `seed_cells_blocks.py` and
`seed_cells_io.py` (the semantics checks), run in that order.

Seeds: the steering repo's shared/seeds/000_*.txt (HybridBlock deep-dive, ids "hybridblock.*")
and shared/seeds/004_*.txt (crash-course "create a neural network", ids
"tutorial.*").  Extra behaviour checks from GLUON_SEMANTICS.md / MXNET_FORMATS.md
have ids "semantics.*".  Snippets are inline one-liners in the seeds; they are
reconstructed here as multi-line code, in document order.  Each document runs
in its own namespace like a notebook (state carries over between its steps);
each semantics check gets a fresh namespace.

Each record:
  id        stable descriptive id (tests look records up by id)
  source    where the code comes from
  code      the exact code that was executed
  display   like a notebook: value of the trailing expression (omitted if None);
            {"type", "repr"} or, for arrays, {"array", "shape", "dtype", "device"}
  stdout    captured stdout; ndarray arguments of print() are replaced by
            "<ndarray shape=... dtype=...>" (random values differ run to run)
  warnings  [{"category", "message"}] (simplefilter('always'))
  error     {"type", "message", "mro"} of the exception that stopped the cell
  stderr    native (C++) stderr during the cell, timestamps normalised
  values    extra facts recorded by the cell (the dict `record`) and by the
            `extra` expressions evaluated after it
  note      remarks (deviations from the seed text, e.g. pretrained=False)

All strings are normalised: object addresses -> " at 0x...", uuid-based
variable names -> "<uuid>".  The script re-executes itself with PYTHONHASHSEED=0
so that messages printing Python sets are reproducible, and seeds MXNet's RNG.
Op node names (node_k) come from a process-wide counter, so they depend on the
order of the cells; keep the order stable when adding cells (append at the end).

Deviations from the seed text are limited to: pretrained=True -> False (no
network for weights; an initialize() is added), and printing timings as
"<t> sec".  Files are written in a temporary working directory.
"""
import json
import os
import shutil
import sys
import tempfile

# importing the recorder pins PYTHONHASHSEED (re-executes this script once) and loads MXNet
from seed_recorder import RECORDS, mx, normalize, onp
from seed_cells_blocks import semantics_blocks
from seed_cells_docs import seed_hybrid, seed_tutorial
from seed_cells_io import semantics_io

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "seed_transcript_mx2.json")
OUT = os.path.abspath(OUT)


def main():
    workdir = tempfile.mkdtemp(prefix="seed_mx2_")
    cwd = os.getcwd()
    os.chdir(workdir)
    try:
        run_all(workdir)
    finally:
        os.chdir(cwd)
        shutil.rmtree(workdir, ignore_errors=True)


def run_all(workdir):
    mx.random.seed(42)

    import platform
    RECORDS.append({
        "id": "meta.environment",
        "source": "seed_examples_mx2.py",
        "code": "",
        "values": {
            "mxnet_version": mx.__version__,
            "numpy_version": onp.__version__,
            "python": platform.python_version(),
            "is_np_array": bool(mx.util.is_np_array()),
            "is_np_shape": bool(mx.util.is_np_shape()),
        },
        "warnings": [], "error": None,
    })

    seed_hybrid(workdir)
    seed_tutorial(workdir)
    semantics_blocks(workdir)
    semantics_io(workdir)

    data = json.dumps(normalize(RECORDS), indent=1, ensure_ascii=False)
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w", encoding="utf-8") as f:
        f.write(data + "\n")
    sys.__stderr__.write(f"wrote {len(RECORDS)} records, {len(data)} bytes -> {OUT}\n")


# --------------------------------------------------------------------------


if __name__ == "__main__":
    main()
