"""Fixtures of the outside-in acceptance checks (the driver is tests/support/project.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.project import Project


@pytest.fixture
def proj(tmp_path: Path) -> Project:
    return Project(tmp_path / "proj")
