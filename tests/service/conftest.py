"""A real uvicorn server on a free loopback port, serving a temp copy of the demo store."""
from __future__ import annotations

import shutil
import socket
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import httpx
import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
STORE = ROOT / "model_store"
FIXTURES = ROOT / "tests" / "fixtures"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_store(dst: Path) -> Path:
    shutil.copytree(STORE, dst, ignore=shutil.ignore_patterns(".*"))
    return dst


class ServerThread:
    """uvicorn.Server in a thread (no signal handlers off the main thread)."""

    def __init__(self, app, port: int):
        import uvicorn
        cfg = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning",
                             access_log=False, lifespan="on", log_config=None)
        self.server = uvicorn.Server(cfg)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self):
        self.thread.start()
        end = time.time() + 30
        while not self.server.started:
            if not self.thread.is_alive() or time.time() > end:
                raise RuntimeError("server did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc):
        self.server.should_exit = True
        self.thread.join(15)


def start_server(store: Path, **overrides):
    from service.app import create_app
    from service.settings import Settings
    port = free_port()
    settings = Settings(model_store=store, port=port, log_level="warning", log_json=True,
                        inference_threads=2, **overrides)
    app = create_app(settings)
    return ServerThread(app, port), SimpleNamespace(
        url=f"http://127.0.0.1:{port}", hostport=f"127.0.0.1:{port}", store=store, app=app,
        core=app.state.core)


@pytest.fixture(scope="session")
def server(tmp_path_factory):
    store = make_store(tmp_path_factory.mktemp("srv") / "store")
    st, info = start_server(store)
    with st:
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
    from service.runner import Runner
    from service.store import ModelStore
    st = ModelStore(STORE, create=False)
    r = Runner.load("mlp", "1", st.files("mlp", "1"), st.read_config("mlp"))
    return lambda x: r.run([np.ascontiguousarray(x, dtype=np.float32)])[0]


def infer_json(name: str, x: np.ndarray, input_name: str = "data", **extra) -> dict:
    from service.protocol.datatypes import v2_datatype
    body = {"inputs": [{"name": input_name, "shape": list(x.shape),
                        "datatype": v2_datatype(x.dtype), "data": x.ravel().tolist()}]}
    body.update(extra)
    return body


def pytest_collection_modifyitems(items):
    # MXNet's SymbolBlock.imports warns about untyped data inputs on every load
    for it in items:
        if "tests/service" in str(it.path):
            it.add_marker(pytest.mark.filterwarnings("ignore:Cannot decide type:UserWarning"))
