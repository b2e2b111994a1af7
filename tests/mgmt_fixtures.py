"""Fixtures of the management fault tests (tests/service/core, tests/reliability): the sample
MMS archive under another model name, and a small real tmpfs to fill up (root only)."""
from __future__ import annotations

import io
import json
import subprocess
import zipfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

from fixture_util import FIXTURES

SAMPLE_MAR = FIXTURES / "mar" / "mms_mlp.mar"


def archive_named(model: str) -> bytes:
    """The sample MLP archive (16 → 4) with its manifest naming `model`."""
    buf = io.BytesIO()
    with zipfile.ZipFile(SAMPLE_MAR) as src, zipfile.ZipFile(buf, "w") as dst:
        for info in src.infolist():
            data = src.read(info.filename)
            if info.filename == "MAR-INF/MANIFEST.json":
                doc = json.loads(data)
                doc["model"]["modelName"] = model
                data = json.dumps(doc).encode()
            dst.writestr(info.filename, data)
    return buf.getvalue()


@contextmanager
def small_tmpfs(mnt: Path, size: str = "4m") -> Iterator[Path]:
    """A tmpfs of `size` mounted at `mnt` (created); the test is skipped where it cannot be
    mounted (not root, no mount)."""
    mnt.mkdir(parents=True, exist_ok=True)
    try:
        subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mnt)],
                       check=True, capture_output=True, timeout=20)
    except (OSError, subprocess.SubprocessError) as e:
        pytest.skip(f"cannot mount a tmpfs here ({e})")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False, timeout=20)
