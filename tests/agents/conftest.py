"""Agents tests: `run_one` (one eval module through the real CLI); pure helpers in tests/support/agents.py."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.support.project import Project, Sealed


@pytest.fixture
def run_one(project: Project) -> Callable[..., Sealed]:
    """`run_one(source, *run_args, toml=..., files={path: text})` → the one sealed attempt."""
    return project.run_one
