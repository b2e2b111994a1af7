"""Helpers for the console's browser tests: Chromium discovery and pages (the server comes from
tests/serverproc.py)."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "mxnet-1.9.1"
SHOTS = ROOT / "artifacts" / "ui"
CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser",
                       "/usr/lib/chromium/chromium")
# what Chromium needs on these machines: no sandbox as root, no GPU, and no background
# traffic to Google (the network is closed: those connections fail, many at a time)
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage", "--disable-extensions", "--mute-audio"]


def chromium_path() -> str | None:
    """/usr/bin/chromium (Debian), or HYBRIDSERVE_CHROMIUM when set (empty: no browser)."""
    env = os.environ.get("HYBRIDSERVE_CHROMIUM")
    if env is not None:
        return env if env and os.access(env, os.X_OK) else None
    for c in CHROMIUM_CANDIDATES:
        if os.access(c, os.X_OK):
            return c
    return shutil.which("chromium") or shutil.which("chromium-browser")


def browser_skip_reason() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install -e '.[test]')"
    if chromium_path() is None:
        return ("no Chromium binary (/usr/bin/chromium); install Debian's chromium with "
                "scripts/install_system_deps.sh")
    return None


class PageErrors(list):
    def check(self):
        assert not self, f"the page reported errors: {list(self)}"


def new_page(browser, width=1400, height=900):
    ctx = browser.new_context(viewport={"width": width, "height": height}, device_scale_factor=1)
    page = ctx.new_page()
    errors = PageErrors()
    page.on("pageerror", lambda e: errors.append(f"pageerror: {e}"))
    # HTTP error statuses are part of the flows under test (and asserted on the page);
    # Chromium also logs each as "Failed to load resource": only script errors count here
    page.on("console", lambda m: errors.append(f"console.{m.type}: {m.text}")
            if m.type == "error" and "Failed to load resource" not in m.text else None)
    page.set_default_timeout(15_000)
    return ctx, page, errors


def shot(page, name: str) -> Path:
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=False)
    return path
