"""Fixtures of the store tests; the record builders live in tests/support/records.py."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from niceeval_cli.store import Store
from tests.support.records import SealedStore


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "slow: a test that takes seconds (real processes); still run by default")


@pytest.fixture
def project(tmp_path: Path) -> Iterator[SealedStore]:
    path = tmp_path / ".niceeval" / "results.db"
    proj = SealedStore(path, Store.open(path))
    yield proj
    for store in proj.opened:
        store.close()
    proj.store.close()

