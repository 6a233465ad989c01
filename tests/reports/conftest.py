"""Fixtures for the reading-surface tests; builders live in view_builders.py (importable by name)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:  # lets tests `from view_builders import ...` under --import-mode=importlib
    sys.path.append(_HERE)

from view_builders import Runs  # noqa: E402

from niceeval_cli.store import Store  # noqa: E402


@pytest.fixture
def runs(tmp_path: Path) -> Iterator[Runs]:
    path = tmp_path / ".niceeval" / "results.db"
    store = Store.open(path)
    try:
        yield Runs(path, store)
    finally:
        store.close()
