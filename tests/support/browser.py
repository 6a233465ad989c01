"""Chromium for tests: Debian's package driven by Playwright (`executable_path`, no download).

Without Chromium or Playwright a browser test skips saying why — except in CI (`CI=true`), where
a missing browser fails it (reports.md, "Testing"; the rule lives in tests/support/components.py). Used by
tests/reports/ and the acceptance tests.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.support.components import need_chromium

CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]


@contextlib.contextmanager
def chromium_context(profile: Path, *, extra_args: tuple[str, ...] = (), **options: Any) -> Iterator[Any]:
    """A persistent headless Chromium context (its own user-data-dir at `profile`); `extra_args`
    go on Chromium's command line (e.g. `--host-resolver-rules=...` to give a name an address)."""
    executable = need_chromium()
    from playwright.sync_api import sync_playwright

    options.setdefault("viewport", {"width": 1100, "height": 900})
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(profile), executable_path=executable, headless=True, args=[*CHROMIUM_ARGS, *extra_args], **options)
        try:
            yield context
        finally:
            context.close()
