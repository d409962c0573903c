"""Real Chromium for the page tests (Debian's ``chromium`` package, driven by Playwright).

The tests carry the ``browser`` marker and skip with the reason when Playwright or a Chromium
binary is missing (``pip install -e '.[browser]'``; ``apt-get install chromium``); ``.ci/run``
installs both and sets ``SQLBENCH_REQUIRE_BROWSER=1``, which turns the skip into a failure.
``SQLBENCH_CHROMIUM`` may name the binary.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest


def chromium_path() -> str | None:
    """The Chromium binary to drive, or None."""
    named = os.environ.get("SQLBENCH_CHROMIUM")
    if named:
        return named if os.path.exists(named) else None
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


@dataclass
class Watched:
    """A page with what it asked the network for and what it said on the console."""

    page: Any
    requests: list[str] = field(default_factory=list)
    console: list[str] = field(default_factory=list)

    def problems(self) -> list[str]:
        """Console errors and warnings, and uncaught exceptions."""
        return [c for c in self.console if c.startswith(("error", "warning", "pageerror"))]


def _missing(reason: str) -> None:
    if os.environ.get("SQLBENCH_REQUIRE_BROWSER") == "1":
        pytest.fail(f"browser tests required (SQLBENCH_REQUIRE_BROWSER=1) but {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    """A headless Chromium (one per test module)."""
    try:
        import playwright.sync_api as playwright_api
    except ImportError:
        _missing("Playwright is not installed: pip install -e '.[browser]'")
    binary = chromium_path()
    if binary is None:
        _missing("no Chromium binary (apt-get install chromium, or set SQLBENCH_CHROMIUM)")
        return
    with playwright_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=binary, args=["--no-sandbox", "--disable-gpu"]
        )
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def open_page(chromium: Any) -> Iterator[Any]:
    """``open_page(url) -> Watched``: a fresh page that records requests and console output."""
    contexts: list[Any] = []

    def _open(url: str) -> Watched:
        context = chromium.new_context(viewport={"width": 1400, "height": 1000})
        contexts.append(context)
        page = context.new_page()
        watched = Watched(page)
        page.on("request", lambda request: watched.requests.append(request.url))
        page.on(
            "console", lambda message: watched.console.append(f"{message.type}: {message.text}")
        )
        page.on("pageerror", lambda error: watched.console.append(f"pageerror: {error}"))
        page.goto(url)
        return watched

    yield _open
    for context in contexts:
        context.close()
