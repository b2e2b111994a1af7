"""The models page names the engine of a version served by OpenVINO (a config's `"engine":
"openvino"`), with its node count and precision (in its provider's name). The test extra installs openvino."""
from __future__ import annotations

import json

import pytest

from serverproc import copy_store, inproc_server

from .uihelpers import new_page

pytestmark = [pytest.mark.browser, pytest.mark.timeout(120)]


def test_models_page_shows_the_openvino_engine(browser, tmp_path):
    import openvino  # noqa: F401 - installed by the test extra: a broken install fails
    store = copy_store(tmp_path / "store", ("lenet",))
    cfg = store / "lenet" / "config.json"
    cfg.write_text(json.dumps({**json.loads(cfg.read_text()), "engine": "openvino"}))
    with inproc_server(store) as srv:
        ctx, page, errors = new_page(browser)
        try:
            page.goto(srv.url + "/ui/#/models")
            note = page.wait_for_selector("tbody[data-model='lenet'] .engine[data-engine]")
            assert note.get_attribute("data-engine") == "openvino"
            text = note.inner_text()
            assert text.startswith("openvino · ") and text.endswith(" nodes · OpenVINOCPU:f32")
            assert "undefined" not in text
            errors.check()
        finally:
            ctx.close()
