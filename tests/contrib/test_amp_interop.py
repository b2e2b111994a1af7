"""Real MXNet 1.9.1 loads hybridserve's bfloat16 exports (tests/interop/check_amp_export.py: graph
read back equal, equal to MXNet's own convert_symbol, bf16 parameters flag 12, imports; run where
the CPU has bf16). Needs the MXNet venv (tests/interop/setup_mxnet_venv.sh 1.9.1)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent


@pytest.mark.slow
@pytest.mark.interop
def test_mxnet_loads_our_bf16_exports():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    res = subprocess.run([sys.executable, str(ROOT / "tests/interop/check_amp_export.py")],
                         capture_output=True, text=True, timeout=900, env=env, cwd=ROOT)
    assert res.returncode == 0, res.stdout + res.stderr[-3000:]
    assert res.stdout.count("ok   ") == 6
