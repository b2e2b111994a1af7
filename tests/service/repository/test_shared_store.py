"""The shared store on disk: manifest after every commit, cross-process lock and race-free
version numbering, recovery that spares live owners, read-only detection, crash points."""
from __future__ import annotations

import fcntl
import os
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from unittest import mock

from fixture_util import FIXTURES
from serverproc import ROOT
from service.repository import faults
from service.repository.config import parse_config
from service.repository.manifest import read_manifest
from service.repository.owner import owner_prefix
from service.repository.recovery import recover
from service.repository.store import ModelStore

MX1 = FIXTURES / "mxnet-1.9.1"


def _stage(st, name: str = "fc_flatten") -> Path:
    d = st.new_staging()
    for f in (f"{name}-symbol.json", f"{name}-0000.params"):
        shutil.copy(MX1 / f, d / f)
    return d


def test_manifest_follows_every_commit(tmp_path):
    st = ModelStore(tmp_path / "s")
    assert st.commit_version("fc", _stage(st)) == "1"
    assert st.commit_version("fc", _stage(st)) == "2"
    m = read_manifest(st.root)
    assert m.generation == 2 and m.models["fc"].versions == ("1", "2")
    assert m.models["fc"].state == "loaded" and m.models["fc"].config_digest is None
    st.set_state("fc", "unloaded")
    st.write_config("fc", parse_config(b'{"description": "x"}'))
    m = read_manifest(st.root)
    assert m.generation == 4 and m.models["fc"].state == "loaded" and m.models["fc"].epoch == 1
    assert m.models["fc"].config_digest.startswith("sha256:")
    st.delete_version("fc", "1")
    assert read_manifest(st.root).models["fc"].versions == ("2",)
    st.delete_version("fc", "2")                     # the last version takes the model along
    assert not (st.root / "fc").exists() and read_manifest(st.root).models == {}
    assert not list((st.root / ".trash").iterdir())
    assert not [p for p in st.root.iterdir() if p.name.startswith(".tmp-")]


def test_version_numbering_is_race_free(tmp_path):
    """Threads of two store objects (as two processes would) commit at once: all distinct."""
    a, b = ModelStore(tmp_path / "s"), ModelStore(tmp_path / "s")
    staged = [(s, _stage(s)) for s in (a, b) * 6]
    got, barrier = [], threading.Barrier(len(staged))

    def commit(s, d):
        barrier.wait()
        got.append(int(s.commit_version("race", d)))
    ts = [threading.Thread(target=commit, args=x) for x in staged]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert sorted(got) == list(range(1, 13))


def test_store_lock_excludes_other_processes(tmp_path):
    st = ModelStore(tmp_path / "s")
    code = ("import fcntl, os, sys, time\n"
            "fd = os.open(sys.argv[1], os.O_RDWR)\n"
            "try:\n    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB); print('got')\n"
            "except BlockingIOError:\n    print('blocked')\n")
    with st.lock:
        out = subprocess.run([sys.executable, "-c", code, str(st.root / ".lock")],
                             capture_output=True, text=True, timeout=30).stdout.strip()
    assert out == "blocked"
    fd = os.open(st.root / ".lock", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)      # released: free again
    finally:
        os.close(fd)


def test_recovery_spares_live_owners_and_restores_replaced(tmp_path):
    st = ModelStore(tmp_path / "s")
    st.commit_version("fc", _stage(st))
    pre = owner_prefix()
    live_pid = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        live = st.root / ".staging" / pre.replace(f"-{os.getpid()}-", f"-{live_pid.pid}-")
        dead = st.root / ".staging" / (pre.replace(f"-{os.getpid()}-", "-999999999-") + "x")
        other_host = st.root / ".staging" / "otherhost-1-abc"
        for d in (live, dead, other_host):
            d.mkdir(parents=True)
        # a replace that died between moving the old version out and the new one in
        trash = st.root / ".trash" / (pre.replace(f"-{os.getpid()}-", "-999999999-") + "t")
        trash.mkdir(parents=True)
        os.rename(st.root / "fc" / "1", trash / "restore=fc=1")
        tmpfile = st.root / "fc" / (".tmp-" + pre.replace(f"-{os.getpid()}-", "-999999999-")
                                    + "ab-config.json")
        tmpfile.write_text("{")
        recover(st)
        assert live.is_dir() and other_host.is_dir() and not dead.exists()
        assert (st.root / "fc" / "1" / "fc_flatten-symbol.json").is_file()
        assert not trash.exists() and not tmpfile.exists()
        os.utime(other_host, (1, 1))                 # older than staging_stale_s
        recover(st)
        assert not other_host.exists() and live.is_dir()
    finally:
        live_pid.kill()
        live_pid.wait()


def test_manifest_republished_when_disk_disagrees(tmp_path):
    st = ModelStore(tmp_path / "s")
    st.commit_version("fc", _stage(st))
    g = read_manifest(st.root).generation
    shutil.copytree(st.root / "fc" / "1", st.root / "fc" / "7")     # by hand
    recover(st)
    m = read_manifest(st.root)
    assert m.generation == g + 1 and m.models["fc"].versions == ("1", "7")
    recover(st)
    assert read_manifest(st.root).generation == g + 1                # unchanged: no rewrite


def test_read_only_is_detected(tmp_path):
    (tmp_path / "s").mkdir()
    with mock.patch("service.repository.store.os.access", return_value=False):
        assert ModelStore(tmp_path / "s").read_only
    assert not ModelStore(tmp_path / "s").read_only
    if os.geteuid() != 0:                      # root writes through permission bits
        os.chmod(tmp_path / "s", 0o555)
        try:
            assert ModelStore(tmp_path / "s").read_only
        finally:
            os.chmod(tmp_path / "s", 0o755)


def test_fault_points_are_documented():
    text = Path(faults.__file__).read_text()
    used = set()
    for p in (ROOT / "service").rglob("*.py"):
        used |= {a or b for a, b in re.findall(r'faults\.point\("([^"]+)"\)|crash_point="([^"]+)"',
                                               p.read_text())}
    assert len(used) >= 7 and all(u in text for u in used), used
