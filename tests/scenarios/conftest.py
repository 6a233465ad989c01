"""The CLI runs in-process in these tests; keep one project's modules out of the next test."""

from __future__ import annotations

import sys
from collections.abc import Callable

import pytest
from projects import Project


def forget(project: Project) -> None:
    """Module-scoped projects clean up the same way (the autouse fixture is per test)."""
    root = str(project.root.resolve())
    sys.path[:] = [entry for entry in sys.path if entry != root]
    for name, module in list(sys.modules.items()):
        if (getattr(module, "__file__", None) or "").startswith(root):
            del sys.modules[name]


@pytest.fixture(scope="session")
def forget_project() -> Callable[[Project], None]:
    return forget
