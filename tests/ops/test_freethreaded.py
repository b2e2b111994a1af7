"""The kernels and the compiler on a free-threaded CPython (no GIL), where the intra-op helpers
spin (ops/_parallel.py). Slow: needs `.venv-ft`, which `bash scripts/freethreaded.sh` builds;
skipped without it."""
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FT_PY = ROOT / ".venv-ft" / "bin" / "python"

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not FT_PY.exists(),
                                 reason="no .venv-ft: run `bash scripts/freethreaded.sh`")]


def test_interpreter_runs_without_the_gil_and_helpers_spin():
    code = ("import sys; from framework.ops import _parallel as p; "
            "print(sys._is_gil_enabled(), p._SPIN)")
    out = subprocess.run([str(FT_PY), "-c", code], cwd=ROOT, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "True"]


def test_kernel_and_compiler_suites_pass_there():
    out = subprocess.run([str(FT_PY), "-m", "pytest", "-q", "-x", "-m", "not slow and not interop",
                          "-p", "no:cacheprovider", "tests/ops", "tests/compiler"],
                         cwd=ROOT, capture_output=True, text=True, timeout=1800)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
    assert " passed" in out.stdout.splitlines()[-1]
