"""Browser tests of the web console (issue 8): headless Debian Chromium driven by Playwright.

They run in the default suite only where a Chromium binary and the `playwright` package are
present (scripts/install_system_deps.sh installs Debian's chromium + chromium-driver; the
`test` extra brings playwright). Playwright never downloads a browser here: it launches the
system binary with `executable_path`. Otherwise every browser test skips with the reason.

A real server (uvicorn on a free loopback port, in a thread) serves a temp copy of the demo
model store. Screenshots of every page go to artifacts/ui/ (gitignored).
"""
from __future__ import annotations

import shutil
from types import SimpleNamespace

import pytest

from serverproc import copy_store, inproc_server

from .uihelpers import CHROMIUM_ARGS, FIXTURES, browser_skip_reason, chromium_path, new_page


def pytest_configure(config):
    config.addinivalue_line("markers", "browser: drives headless Chromium (skips without it)")


def pytest_collection_modifyitems(config, items):
    reason = browser_skip_reason()
    for it in items:
        if "tests/ui" not in str(it.path):
            continue
        it.add_marker(pytest.mark.filterwarnings("ignore:Cannot decide type:UserWarning"))
        # the NaN-injection flow makes the server's kernels warn, as NumPy does on NaN
        it.add_marker(pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning"))
        if it.get_closest_marker("browser") and reason:
            it.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(scope="session")
def ui_server(tmp_path_factory):
    store = copy_store(tmp_path_factory.mktemp("ui") / "store")
    # a model that cannot load (its params are missing): the console must show why
    broken = store / "broken" / "1"
    broken.mkdir(parents=True)
    shutil.copy(FIXTURES / "mini_resnet_v1-symbol.json", broken / "broken-symbol.json")
    with inproc_server(store) as info:
        yield info


# package scope: the sync API keeps an event loop running in the main thread while it is
# open, so later suites' asyncio.run() (tests/reliability) would fail if it outlived tests/ui
@pytest.fixture(scope="package")
def playwright_instance():
    reason = browser_skip_reason()
    if reason:
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        yield p


@pytest.fixture(scope="package")
def browser(playwright_instance):
    # launch() gives every run a fresh, empty profile (--user-data-dir in a new temp folder)
    b = playwright_instance.chromium.launch(executable_path=chromium_path(), headless=True,
                                            args=CHROMIUM_ARGS)
    yield b
    b.close()


@pytest.fixture(scope="module")
def console(browser, ui_server):
    """One page for a module's tests, in order; `errors` collects JS errors."""
    ctx, page, errors = new_page(browser)
    yield SimpleNamespace(page=page, errors=errors, url=ui_server.url + "/ui/", server=ui_server)
    ctx.close()


