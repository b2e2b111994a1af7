"""The store without a server: model names, symlinks leading out, startup recovery, config forms."""
from __future__ import annotations

import json
import os

import pytest

from service.errors import BadRequest
from service.repository.config import parse_config
from service.repository.recovery import recover
from service.repository.owner import owner_prefix
from service.repository.store import ModelStore, check_name


def test_config_forms():
    ours = parse_config({"inputs": [{"name": "data", "shape": [-1, 4]}], "max_batch_size": 4})
    triton = parse_config(json.dumps({"name": "m", "max_batch_size": 4, "input": [
        {"name": "data", "data_type": "TYPE_FP32", "dims": [4]}]}))
    assert ours.inputs == triton.inputs
    assert triton.to_triton()["input"] == [{"name": "data", "data_type": "TYPE_FP32", "dims": [4]}]
    for bad in ('{"max_batch_size": "x"}', '{"unknown": 1}', "[]", "{",
                '{"dynamic_batching": {}}', '{"inputs": [{"name": "a", "datatype": "FP8"}]}'):
        with pytest.raises(BadRequest):
            parse_config(bad)


def test_store_names_and_symlinks(tmp_path):
    for bad in ("", ".x", "..", "a/b", "a\\b", "stats", "x" * 200, "a..b"):
        with pytest.raises(BadRequest):
            check_name(bad)
    root = tmp_path / "store"
    st = ModelStore(root)
    outside = tmp_path / "outside"
    (outside / "1").mkdir(parents=True)
    os.symlink(outside, root / "evil")
    assert st.models() == []
    with pytest.raises(BadRequest):
        st.versions("evil")
    (root / "good" / "1").mkdir(parents=True)
    os.symlink(outside / "1", root / "good" / "2")
    assert st.versions("good") == ["1"]
    # recovery removes only debris nobody can still be writing (tests/reliability covers more)
    dead = owner_prefix().replace(f"-{os.getpid()}-", "-999999999-") + "x"
    for d in (dead, "junk-old", "junk-fresh"):
        (root / ".staging" / d).mkdir(parents=True)
    os.utime(root / ".staging" / "junk-old", (1, 1))
    recover(st)
    assert sorted(p.name for p in (root / ".staging").iterdir()) == ["junk-fresh"]
