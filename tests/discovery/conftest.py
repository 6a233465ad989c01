"""The CLI runs in-process in these tests; keep one project's modules out of the next test."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest
from projects import Project


@pytest.fixture(autouse=True)
def _forget_project_modules(project: Project) -> Iterator[None]:
    """Drop modules imported from this test's project, so a later test's `app.py` is fresh."""
    yield
    root = str(project.root.resolve())
    sys.path[:] = [entry for entry in sys.path if entry != root]
    for name, module in list(sys.modules.items()):
        if (getattr(module, "__file__", None) or "").startswith(root):
            del sys.modules[name]
