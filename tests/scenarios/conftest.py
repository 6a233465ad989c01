"""The CLI runs in-process in these tests; keep one project's modules out of the next test."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.support.project import Project


def forget(project: Project) -> None:
    """Module-scoped projects clean up the same way (the autouse fixture is per test)."""
    project.forget()


@pytest.fixture(scope="session")
def forget_project() -> Callable[[Project], None]:
    return forget
