"""Fixtures of the end-to-end judge tests (helpers live in tests/support/judge_e2e.py)."""

from __future__ import annotations

import pytest

from tests.support.judge_e2e import Judged
from tests.support.loopback import JudgeServer
from tests.support.project import Project


@pytest.fixture
def judged(project: Project, judge_server: JudgeServer) -> Judged:
    return Judged(project, judge_server)


