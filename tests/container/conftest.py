"""Session fixtures of the container tests: the engine (tests/container/docker_engine.py), the base
image (scripts/build_base_image.sh, cached), the hybridserve image built with BuildKit.

Run as root on Debian (CI does): they install docker.io, mmdebstrap and Compose v2
(scripts/install_container_deps.sh), start their own dockerd and remove everything at the
end. Elsewhere they skip with the reason. HYBRIDSERVE_CONTAINER_TESTS=0 skips them too.
"""
from __future__ import annotations

import os
import subprocess

import pytest

from docker_engine import ROOT, Engine, install_deps, skip_reason

IMAGE = "hybridserve:0.1.0"           # the tag docker-compose.yml runs


def _reason() -> str | None:
    if os.environ.get("HYBRIDSERVE_CONTAINER_TESTS", "1") == "0":
        return "HYBRIDSERVE_CONTAINER_TESTS=0"
    return skip_reason()


@pytest.fixture(scope="session")
def engine():
    reason = _reason()
    if reason:
        pytest.skip(reason)
    eng = Engine(install_deps())
    try:
        eng.start()
        base = subprocess.run(["bash", str(ROOT / "scripts/build_base_image.sh")],
                              capture_output=True, text=True, timeout=900, env=eng.env,
                              stdin=subprocess.DEVNULL)
        assert base.returncode == 0, base.stderr[-3000:]
        yield eng
    finally:
        eng.stop()


def build(eng: Engine, tag: str, buildkit: bool, *extra: str) -> None:
    eng.docker("build", "-q", "-t", tag, *extra, str(ROOT), timeout=900,
               env={"DOCKER_BUILDKIT": "1" if buildkit else "0"})


@pytest.fixture(scope="session")
def image(engine) -> str:
    build(engine, IMAGE, True)
    return IMAGE
