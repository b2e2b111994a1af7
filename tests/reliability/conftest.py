"""Reliability suite: shared fixtures and the measured figures printed at the end of a run."""
from __future__ import annotations

import pytest

from .relutil import RESULTS, inproc_server, make_store


@pytest.fixture(scope="module")
def rserver(tmp_path_factory):
    """A server on a temp copy of the demo store with small limits (module-scoped)."""
    store = make_store(tmp_path_factory.mktemp("rel") / "store")
    with inproc_server(store, max_upload_bytes=8 << 20, max_params_bytes=16 << 20,
                       max_symbol_bytes=1 << 20, max_graph_nodes=2000,
                       max_body_bytes=4 << 20) as srv:
        yield srv


def pytest_collection_modifyitems(items):
    for it in items:
        if "tests/reliability" in str(it.path):
            it.add_marker(pytest.mark.filterwarnings("ignore:Cannot decide type:UserWarning"))


def pytest_terminal_summary(terminalreporter):
    if not RESULTS:
        return
    tr = terminalreporter
    tr.section("reliability figures")
    for r in RESULTS:
        figures = ", ".join(f"{k}={v}" for k, v in r.items() if k not in ("kind", "what"))
        tr.write_line(f"[{r['kind']}] {r['what']}: {figures}")
