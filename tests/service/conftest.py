"""Service tests: one real server (uvicorn in a thread, on a free loopback port) serving a temp
copy of the demo store, shared by the session. Helpers live in tests/serverproc.py."""
from __future__ import annotations

import httpx
import numpy as np
import pytest

from serverproc import STORE, copy_store, inproc_server
from service.repository.store import ModelStore
from service.runtime.runner import Runner


@pytest.fixture(scope="session")
def server(tmp_path_factory):
    with inproc_server(copy_store(tmp_path_factory.mktemp("srv") / "store")) as info:
        yield info


@pytest.fixture(scope="session")
def http(server):
    with httpx.Client(base_url=server.url, timeout=30) as c:
        yield c


@pytest.fixture(scope="session")
def triton(server):
    import tritonclient.http as tc
    c = tc.InferenceServerClient(url=server.hostport, concurrency=8)
    yield c
    c.close()


@pytest.fixture(scope="session")
def mlp_ref():
    """Reference outputs of the demo MLP computed directly with the framework."""
    st = ModelStore(STORE, create=False)
    r = Runner.load("mlp", "1", st.files("mlp", "1"), st.read_config("mlp"))
    return lambda x: r.run([np.ascontiguousarray(x, dtype=np.float32)])[0]


def pytest_collection_modifyitems(items):
    # MXNet's SymbolBlock.imports warns about untyped data inputs on every load
    for it in items:
        if "tests/service" in str(it.path):
            it.add_marker(pytest.mark.filterwarnings("ignore:Cannot decide type:UserWarning"))
