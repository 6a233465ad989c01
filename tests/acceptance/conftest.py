"""Fixtures of the outside-in acceptance checks (the driver is tests/support/project.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.project import Project


@pytest.fixture
def proj(tmp_path: Path) -> Project:
    return Project(tmp_path / "proj")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A test that drives `proj` starts real `niceeval` processes: seconds each, so it is `slow`
    (still run by default; `-m 'not slow'` leaves it out)."""
    here = Path(__file__).parent
    for item in items:
        if here in item.path.parents and "proj" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.slow)
