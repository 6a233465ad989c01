"""Shared fixtures for the configuration tests: a project folder with a niceeval.toml."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest


@pytest.fixture
def write_config(tmp_path: Path) -> Callable[[str], Path]:
    """Write `text` as tmp_path/niceeval.toml and return the project folder."""

    def write(text: str) -> Path:
        (tmp_path / "niceeval.toml").write_text(text, encoding="utf-8")
        return tmp_path

    return write
