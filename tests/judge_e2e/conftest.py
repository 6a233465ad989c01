"""Fixtures of the end-to-end judge tests (helpers live in judge_e2e_support.py)."""

from __future__ import annotations

import sys
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


