"""Every test runs the framework's NumPy reference engine unless it asks for the default one.

Most framework tests compare hybridized blocks exactly against imperative or recorded outputs:
they pin the reference engine here, once (and skip building ONNX Runtime sessions at every
`hybridize()`). Tests of the default engine (ONNX Runtime when installed) take the
`default_engine` fixture. The server is unaffected: it picks its engines explicitly.
"""
from __future__ import annotations

import pytest

from framework.compiler import engine

engine.set_default_engine(engine.NUMPY)


@pytest.fixture
def default_engine(monkeypatch):
    """The engine a user gets from a plain `hybridize()` (no setting, no environment)."""
    monkeypatch.delenv(engine.ENV, raising=False)
    monkeypatch.delenv(engine.MXNET_ENV, raising=False)
    prev = engine.set_default_engine(None)
    yield engine.default_engine()
    engine.set_default_engine(prev)
