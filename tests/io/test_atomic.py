"""framework.io.atomic.write_atomic: all or nothing, the temp file's prefix, the hook between the
write and the rename (service/repository/manifest.py's crash point uses it)."""
from __future__ import annotations

import os

import pytest

from framework.io.atomic import write_atomic


def test_replaces_and_keeps_the_mode(tmp_path):
    p = tmp_path / "f.bin"
    write_atomic(p, b"one")
    assert p.read_bytes() == b"one" and p.stat().st_mode & 0o777 == 0o644
    os.chmod(p, 0o600)
    write_atomic(p, b"two")
    assert p.read_bytes() == b"two" and p.stat().st_mode & 0o777 == 0o600
    assert sorted(os.listdir(tmp_path)) == ["f.bin"]


def test_hook_runs_between_write_and_rename(tmp_path):
    p = tmp_path / "f.bin"
    p.write_bytes(b"old")
    seen = []

    def hook():
        temps = [n for n in os.listdir(tmp_path) if n != "f.bin"]
        seen.append((p.read_bytes(), temps, [(tmp_path / n).read_bytes() for n in temps]))

    write_atomic(p, b"new", prefix=".tmp-me-", before_replace=hook)
    [(target, temps, contents)] = seen
    assert target == b"old" and contents == [b"new"]            # written, not yet renamed
    assert len(temps) == 1 and temps[0].startswith(".tmp-me-")
    assert p.read_bytes() == b"new" and os.listdir(tmp_path) == ["f.bin"]


def test_failing_hook_leaves_the_old_file_and_no_temp(tmp_path):
    p = tmp_path / "f.bin"
    p.write_bytes(b"old")

    def hook():
        raise RuntimeError("crash here")

    with pytest.raises(RuntimeError, match="crash here"):
        write_atomic(p, b"new", before_replace=hook)
    assert p.read_bytes() == b"old" and os.listdir(tmp_path) == ["f.bin"]
