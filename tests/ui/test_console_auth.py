"""The access token in the browser: asked for once, kept in sessionStorage, sent as
`Authorization: Bearer …` on every API request (fetch and the XHR upload alike)."""
from __future__ import annotations

import pytest

from serverproc import copy_store, inproc_server

from .uihelpers import FIXTURES, new_page, shot

pytestmark = [pytest.mark.browser, pytest.mark.timeout(90)]
TOKEN = "console-s3cret"


@pytest.fixture(scope="module")
def locked_server(tmp_path_factory):
    store = copy_store(tmp_path_factory.mktemp("uiauth") / "store", ("mlp",))
    with inproc_server(store, auth_token=TOKEN, auth_inference=True) as info:
        yield info


def test_token_is_asked_once_and_sent_everywhere(browser, locked_server):
    ctx, page, errors = new_page(browser)
    api_calls = []
    page.on("request", lambda r: api_calls.append((r.url, r.headers.get("authorization")))
            if "/v2/" in r.url or "/ui/api/" in r.url else None)
    try:
        page.goto(locked_server.url + "/ui/")
        dialog = page.wait_for_selector("#token-dialog[open]")
        assert "token" in dialog.inner_text().lower()
        shot(page, "13-token-dialog")
        page.fill("#token-input", TOKEN)
        page.press("#token-input", "Enter")
        page.wait_for_selector("tr[data-model='mlp'][data-state='READY']")
        assert page.evaluate("sessionStorage.getItem('hybridserve.token')") == TOKEN
        assert page.inner_text("#token-button") == "Access token ✓"
        assert not page.is_visible("#token-dialog[open]")

        # an upload (XMLHttpRequest) carries the token too
        page.goto(locked_server.url + "/ui/#/upload")
        page.set_input_files("#up-symbol", str(FIXTURES / "mini_resnet_v1-symbol.json"))
        page.set_input_files("#up-params", str(FIXTURES / "mini_resnet_v1-0000.params"))
        page.click("#up-submit")
        page.wait_for_selector("#upload-result .alert-ok", timeout=30_000)

        # a reload keeps the token for this tab: no second prompt
        page.goto(locked_server.url + "/ui/#/models")
        page.reload()
        page.wait_for_selector("tr[data-model='mini_resnet_v1']")
        assert not page.is_visible("#token-dialog[open]")
        after = [(u, a) for u, a in api_calls if a is not None]
        assert len(after) >= 4
        # every API call after the first prompt carried the bearer token
        first_ok = next(i for i, (_, a) in enumerate(api_calls) if a)
        assert all(a == f"Bearer {TOKEN}" for _, a in api_calls[first_ok:]), api_calls
        errors.check()
    finally:
        ctx.close()


def test_wrong_token_then_cancel_then_fix(browser, locked_server):
    ctx, page, errors = new_page(browser)
    try:
        page.goto(locked_server.url + "/ui/#/models")
        page.wait_for_selector("#token-dialog[open]")
        page.fill("#token-input", "wrong")
        page.press("#token-input", "Enter")
        # refused again: the dialog comes back with the server's reason
        page.wait_for_function("() => document.querySelector('#token-dialog').open && "
                               "document.querySelector('#token-reason').textContent"
                               ".includes('invalid bearer token')")
        page.click("#token-dialog button[value='cancel']")
        alert = page.wait_for_selector("#models-body [role='alert']")
        assert "bearer token" in alert.inner_text()
        # cancelled: auto-refresh does not keep prompting
        page.wait_for_timeout(2500)
        assert not page.is_visible("#token-dialog[open]")
        # the header's button lets the user fix it; the page refreshes by itself
        page.click("#token-button")
        page.wait_for_selector("#token-dialog[open]")
        page.fill("#token-input", TOKEN)
        page.press("#token-input", "Enter")
        page.wait_for_selector("tr[data-model='mlp'][data-state='READY']")
        errors.check()
    finally:
        ctx.close()
