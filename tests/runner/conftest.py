"""The CLI runs in-process in these tests; keep one project's modules out of the next test.

`run_library` drives the runner as a library (tests/support/run_library.py)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.run_library import RunLibrary, library_runner


@pytest.fixture
def run_library(project: Any, monkeypatch: pytest.MonkeyPatch) -> RunLibrary:
    return library_runner(project, monkeypatch)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "slow: a test that takes seconds (real subprocesses, sleeps); still run")
