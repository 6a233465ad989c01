"""Agents tests: `run_one` (one eval module through the real CLI); pure helpers in tests/support/agents.py."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from tests.support.project import Project, Result

Row = dict[str, Any]


@dataclass(frozen=True)
class Sealed:
    run: Result
    attempt: Row
    results: list[Row]  # in registration order

    def by_label(self, label: str) -> Row:
        found = [r for r in self.results if r["label"] == label]
        assert len(found) == 1, (label, self.results)
        return found[0]


@pytest.fixture
def run_one(project: Project) -> Callable[..., Sealed]:
    """`run_one(source, *run_args, toml=..., files={path: text})` → the one sealed attempt."""

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
