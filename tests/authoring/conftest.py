"""Run one eval module through the real CLI and read back its sealed attempt and results."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.support.project import Project, Sealed

RunOne = Callable[..., Sealed]


@pytest.fixture
def run_one(project: Project) -> RunOne:
    """`run_one(source, *run_args, toml=..., files={path: text})` → the one sealed attempt."""
    return project.run_one


def source_line(source: str, marker: str) -> int:
    """1-based line of the first line containing `marker`, as `Project.write` stores the source."""
    import textwrap

    lines = textwrap.dedent(source).lstrip("\n").splitlines()
    return next(i for i, line in enumerate(lines, 1) if marker in line)


@pytest.fixture
def line_of() -> Callable[[str, str], int]:
    return source_line
