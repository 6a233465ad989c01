"""Fixtures of the end-to-end judge tests (helpers live in judge_e2e_support.py)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from judge_server import JudgeServer
from projects import Project

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:  # lets the tests `from judge_e2e_support import ...`
    sys.path.append(_HERE)

from judge_e2e_support import Judged  # noqa: E402


@pytest.fixture
def judged(project: Project, judge_server: JudgeServer) -> Judged:
    return Judged(project, judge_server)


@pytest.fixture(autouse=True)
def _forget_project_modules(project: Project) -> Iterator[None]:
    """The CLI runs in process: drop modules imported from this project afterwards, so the next
    test's `evals/e.py` is not served from this one's import cache."""
    yield
    root = str(project.root.resolve())
    for name, module in list(sys.modules.items()):
        if (getattr(module, "__file__", None) or "").startswith(root):
            del sys.modules[name]


