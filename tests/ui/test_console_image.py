"""The console's image try-it: drop an image on the demo `colors` model (config `preprocess` +
`label_filename`), see the top-5 with labels; a bad image shows the server's 400."""
from __future__ import annotations

import io

import pytest
from PIL import Image

from service.cli.demo import COLORS

from .test_console import drop_files
from .uihelpers import shot

pytestmark = [pytest.mark.browser, pytest.mark.timeout(120)]


def test_drop_an_image_see_top5_with_labels(console, tmp_path):
    page = console.page
    photo = tmp_path / "sunflower.jpg"
    Image.new("RGB", (320, 240), COLORS["yellow"]).save(photo)
    page.goto(console.url + "#/try/colors/1")
    page.wait_for_selector("#try-image-drop")
    drop_files(page, "#try-image-drop", [photo])
    page.wait_for_selector("table.image-topk tbody tr")
    labels = page.locator("table.image-topk tbody th").all_inner_texts()
    assert len(labels) == 5 and labels[0] == "yellow" and set(labels) <= set(COLORS)
    assert page.locator("table.image-topk tbody tr").first.locator("td.num").inner_text() == \
        str(list(COLORS).index("yellow"))
    assert page.is_visible("#try-image-preview")
    assert "sunflower.jpg" in page.inner_text("#try-image-status")
    shot(page, "08-try-image")

    # the picker takes the same path; k is honoured
    page.fill("#try-image-k", "3")
    png = tmp_path / "sky.png"
    buf = io.BytesIO()
    Image.new("RGB", (64, 100), COLORS["blue"]).save(buf, "PNG")
    png.write_bytes(buf.getvalue())
    page.set_input_files("#try-image-file", str(png))
    page.wait_for_function("() => document.querySelector('#try-image-status').textContent"
                           ".includes('sky.png') && document.querySelectorAll("
                           "'table.image-topk tbody tr').length === 3")
    assert page.locator("table.image-topk tbody th").first.inner_text() == "blue"

    bad = tmp_path / "notes.jpg"
    bad.write_bytes(b"these are not pixels")
    drop_files(page, "#try-image-drop", [bad])
    page.wait_for_selector("#try-image-output [role=alert]")
    assert "not an image in a supported format" in page.inner_text("#try-image-output")
    console.errors.check()


def test_models_without_image_input_have_no_image_card(console):
    page = console.page
    page.goto(console.url + "#/try/mlp/1")
    page.wait_for_selector("#try-run")
    assert page.locator("#try-image-drop").count() == 0
