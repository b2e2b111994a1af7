"""One SeaweedFS S3 server for the whole session (s3server.py), one bucket with a fresh prefix per test and
the standard AWS variables pointing at it. Skipped, with the reason, where the `weed` binary
or boto3 cannot be installed."""
from __future__ import annotations

import os
import uuid

import pytest

from s3server import SeaweedS3


@pytest.fixture(scope="session")
def seaweed(tmp_path_factory):
    why = SeaweedS3.unavailable()
    if why:
        pytest.skip(why)
    d = tmp_path_factory.mktemp("seaweed")
    s3 = SeaweedS3(d / "data", d / "weed.log").start()
    try:
        yield s3
    finally:
        s3.stop()


@pytest.fixture
def s3env(seaweed, monkeypatch):
    for k in [k for k in os.environ if k.startswith("AWS_")]:
        monkeypatch.delenv(k)
    for k, v in seaweed.env().items():
        monkeypatch.setenv(k, v)
    return seaweed.env()


@pytest.fixture(scope="session")
def session_bucket(seaweed) -> str:
    return seaweed.make_bucket("hybridserve-tests")      # one: each bucket takes volumes


@pytest.fixture
def bucket(session_bucket, s3env) -> str:
    return session_bucket


@pytest.fixture
def pfx() -> str:
    """This test's own prefix in the shared bucket."""
    return f"t{uuid.uuid4().hex[:12]}"
