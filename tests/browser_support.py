"""Chromium for tests: Debian's package driven by Playwright (`executable_path`, no download).

Without Chromium or Playwright a browser test skips saying why — except in CI (`CI=true`), where
a missing browser fails it (reports.md, "Testing"). Used by tests/report/ and the acceptance tests.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]


def chromium_path() -> str | None:
    for candidate in (os.environ.get("NICEEVAL_CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium")):
        if candidate and Path(candidate).is_file():
            return candidate
    return None


def missing(reason: str) -> None:
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{reason} (CI=true: the browser tests must run; .ci/run installs chromium and playwright)")
    pytest.skip(reason)


@contextlib.contextmanager
def chromium_context(profile: Path, **options: Any) -> Iterator[Any]:
    """A persistent headless Chromium context (its own user-data-dir at `profile`)."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing("Playwright for Python is not installed (pip install playwright)")
    executable = chromium_path()
    if executable is None:
        missing("Chromium is not installed (apt-get install chromium)")
    options.setdefault("viewport", {"width": 1100, "height": 900})
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(profile), executable_path=executable, headless=True, args=CHROMIUM_ARGS, **options)
        try:
            yield context
        finally:
            context.close()
