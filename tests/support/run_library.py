"""The runner driven as a library (for what the CLI does not print yet: RunOutcome fields, the
records handed to the audience, other executors): the `run_library` fixture of tests/runner."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from niceeval_cli._records import AssertionResult, AttemptRecord
from niceeval_cli.config import RunOverrides, load_config
from niceeval_cli.discovery import discover
from niceeval_cli.runner import NullEvents, PlannedSlot, RerunMode, RunOutcome, RunRequest, run


@dataclass
class Recorder(NullEvents):
    """Keeps what the runner tells its audience."""

    sealed_attempts: list[AttemptRecord] = field(default_factory=list)
    sealed_results: list[Sequence[AssertionResult]] = field(default_factory=list)

    def sealed(
        self, run_id: str, slot: PlannedSlot, attempt: AttemptRecord, results: Sequence[AssertionResult]
    ) -> None:
        self.sealed_attempts.append(attempt)
        self.sealed_results.append(results)

    def attempt(self, eval_id: str) -> AttemptRecord:
        found = [a for a in self.sealed_attempts if a.eval_id == eval_id]
        assert found, f"no sealed attempt of {eval_id}: {[a.eval_id for a in self.sealed_attempts]}"
        return found[0]


RunLibrary = Callable[..., tuple[RunOutcome, Recorder]]


def library_runner(project: Any, monkeypatch: pytest.MonkeyPatch) -> RunLibrary:
    """`run_library` for `project`, its working-directory change undone by `monkeypatch`."""
    def go(*, mode: RerunMode = RerunMode.DEFAULT, executor: str = "inprocess",
           max_concurrency: int | None = None) -> tuple[RunOutcome, Recorder]:
        monkeypatch.chdir(project.root)
        config = load_config(project.root / "niceeval.toml")
        request = RunRequest(
            project=config, evals=discover(config.eval_roots, config.root), mode=mode,
            overrides=RunOverrides(max_concurrency=max_concurrency),
        )
        recorder = Recorder()
        return run(request, recorder, executor=executor), recorder

    return go
