"""Run one eval module through the real CLI and read back its sealed attempt and results."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from tests.support.project import Project, Result

Row = dict[str, Any]


@dataclass(frozen=True)
class Sealed:
    """What `niceeval run` sealed for a module holding exactly one eval."""

    run: Result
    attempt: Row
    results: list[Row]  # in registration order

    def by_label(self, label: str) -> Row:
        found = [r for r in self.results if r["label"] == label]
        assert len(found) == 1, (label, self.results)
        return found[0]

    @property
    def labels(self) -> list[str | None]:
        return [r["label"] for r in self.results]


RunOne = Callable[..., Sealed]



@pytest.fixture
def run_one(project: Project) -> RunOne:
    """`run_one(source, *run_args, toml=..., files={path: text})` → the sealed attempt."""

    def go(source: str, *args: str, toml: str = "[project]\n", files: dict[str, str] | None = None) -> Sealed:
        project.write("niceeval.toml", toml)
        for rel, text in (files or {}).items():
            project.write(rel, text)
        project.write("evals/e.py", source)
        run = project.run(*args)
        assert run.exit_code in (0, 1, 5), (run.exit_code, run.stdout, run.stderr)
        attempts = project.attempts()
        assert len(attempts) == 1, attempts
        results = sorted(project.assertions(), key=lambda r: r["ordinal"])
        return Sealed(run, attempts[0], results)

    return go


def source_line(source: str, marker: str) -> int:
    """1-based line of the first line containing `marker`, as `Project.write` stores the source."""
    import textwrap

    lines = textwrap.dedent(source).lstrip("\n").splitlines()
    return next(i for i, line in enumerate(lines, 1) if marker in line)


@pytest.fixture
def line_of() -> Callable[[str, str], int]:
    return source_line
