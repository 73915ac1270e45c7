"""Headless Chromium (Debian's package) driven by Playwright, for opening reports as a user would."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Iterator

import pytest

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """Module-scoped on purpose: Playwright's sync API keeps an event loop running in the main
    thread while it is open, which would break every later test that calls ``asyncio.run``."""
    executable = shutil.which("chromium") or shutil.which("chromium-browser")
    if executable is None:
        pytest.skip("Chromium is not installed (Debian package 'chromium'; .ci/run installs it)")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        yield b
        b.close()


class Opened:
    """A report page opened from disk, with everything the browser complained about."""

    def __init__(self, browser: object, path: Path) -> None:
        self.page = browser.new_page()  # type: ignore[attr-defined]
        self.console: list[tuple[str, str]] = []
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.dialogs: list[str] = []
        self.page.on("console", lambda m: self.console.append((m.type, m.text)))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))
        self.page.goto(path.resolve().as_uri())
        self.page.wait_for_load_state("load")

    def close(self) -> None:
        self.page.close()


@pytest.fixture
def open_report(browser: object) -> Iterator[object]:
    pages: list[Opened] = []

    def _open(path: Path) -> Opened:
        pages.append(Opened(browser, path))
        return pages[-1]

    yield _open
    for p in pages:
        p.close()


@pytest.fixture
def own_scripts_removed():
    def own_scripts_removed(html: str) -> str:
        """The page with its two own script elements taken out, after checking they are exactly the
        item data (JSON with no raw ``<``) and the item browser; any other script is left in place."""
        from langrag_eval.report.build import _SCRIPT

        data = re.search(r'<script type="application/json" id="items-data">(.*?)</script>', html, re.S)
        assert data is not None and "<" not in data.group(1) and ">" not in data.group(1)
        code = f'<script id="items-browser">{_SCRIPT}</script>'
        assert html.count(code) == 1
        return html.replace(data.group(0), "").replace(code, "")

    return own_scripts_removed
