"""Fixtures of the scale tests (helpers in tests/support/scale_project.py)."""

from __future__ import annotations

import pytest

from tests.support.scale_project import TOML, eval_source


@pytest.fixture
def suite(project):
    project.write("niceeval.toml", TOML)
    project.write("evals/many.py", eval_source())
    return project
