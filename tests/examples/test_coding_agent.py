"""examples/coding_agent (seed 002's operations notes): a coding agent in a fresh local sandbox per
attempt; tests run in the workspace, the diff is searched for secrets, NOTES.md goes to two judges."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.examples import ExamplesProject, Run, copy_examples
from tests.support.loopback import JudgeServer, Reply

EVAL = "coding_agent/task"
LEAKED = "sk-live-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c"


Judged = tuple[ExamplesProject, Run, list[str], list[Path]]


@pytest.fixture(scope="module")
def judged_twice(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Judged]:
    """The three local experiments, two attempts each, with a judge: one run for the two checks
    that read it (each attempt starts the agent and the workspace's tests: ~0.5 s of CPU apiece).
    Yields the project, the run, the judge's grading questions and what the run left in its own
    temporary folder."""
    folder = tmp_path_factory.mktemp("coding_agent")
    own_tmp = folder / "tmp"
    own_tmp.mkdir()
    with pytest.MonkeyPatch.context() as monkeypatch, JudgeServer() as judge:
        examples = copy_examples(folder, monkeypatch)
        judge.default = Reply.tool("Y", "explained")
        examples.use_judge(judge)
        with pytest.MonkeyPatch.context() as temporary:
            temporary.setattr(tempfile, "tempdir", str(own_tmp))
            run = examples.run("-e", "coding_agent", "-e", "coding_agent/", "--attempts", "2")
        questions = [json.dumps(r.json) for r in judge.grading_requests]
        yield examples, run, questions, list(own_tmp.glob("niceeval-sandbox-*"))


def _states(examples: Any, experiment: str) -> dict[str, str]:
    return {key: row["state"] for key, row in examples.assertions(experiment).items()}


def _attempts(examples: ExamplesProject, experiment: str) -> list[tuple[dict[str, Any], dict[str, dict[str, Any]]]]:
    """Each attempt of the experiment with its assertion results by key."""
    results: dict[str, dict[str, dict[str, Any]]] = {}
    for row in examples.query("assertions", "--experiment", experiment):
        results.setdefault(row["attempt_id"], {})[row["key"]] = row
    return [(attempt, results.get(attempt["id"], {}))
            for attempt in examples.query("attempts", "--experiment", experiment)]


def test_with_a_judge_the_good_agent_passes_and_each_broken_one_fails_its_own_gate(judged_twice: Judged) -> None:
    examples, run, questions, left = judged_twice
    assert run.exit_code == 1, run.output
    good = _attempts(examples, "coding_agent")
    assert len(good) == 2
    for attempt, results in good:
        assert attempt["state"] == "passed"
        assert {key: row["state"] for key, row in results.items()} == {
            "calc.py edited": "matched", "Tests pass": "matched", "No secrets written": "matched",
            "NOTES.md written": "matched", "Install explained": "met", "Rollback explained": "met",
        }
    forgets = _attempts(examples, "coding_agent/forgets-notes")
    assert len(forgets) == 2
    for attempt, results in forgets:
        assert attempt["state"] == "failed" and "NOTES.md written" in attempt["stop_cause"]
        assert "Install explained" not in results  # stopped before
    leaks = _attempts(examples, "coding_agent/leaks-key")
    assert len(leaks) == 2
    for attempt, results in leaks:
        leak = results["No secrets written"]
        assert attempt["state"] == "failed"
        assert leak["state"] == "mismatched" and "settings.env:1" in leak["explanation"]
        assert LEAKED not in json.dumps(leak)
    assert LEAKED not in run.output
    # one judge per criterion, each reading NOTES.md as read through t.sandbox
    assert len(questions) == 8  # two criteria × (coding_agent, leaks-key) × two attempts; forgets-notes stopped
    assert sum("explain how to install the project?" in q for q in questions) == 4
    assert sum("explain how to roll the change back?" in q for q in questions) == 4
    assert all("git revert" in q for q in questions)
    assert left == []


def test_each_attempt_sandbox_is_stored_and_nothing_is_left_behind(judged_twice: Judged) -> None:
    examples, run, _questions, left = judged_twice
    assert run.exit_code == 1, run.output
    attempts = examples.query("attempts", "--experiment", "coding_agent")
    assert len(attempts) == 2
    for attempt in attempts:
        stored = attempt["sandbox"] if isinstance(attempt["sandbox"], dict) else json.loads(attempt["sandbox"])
        assert stored == {"kind": "local"}
    assert left == []
    assert not (examples.root / "examples" / "coding_agent" / "_repo" / "NOTES.md").exists()  # template untouched


def test_the_docker_experiment_runs_the_same_eval_in_a_container(examples: Any) -> None:
    from tests.support.docker import need_docker, niceeval_containers

    need_docker("niceeval-example/coding-agent")
    folder = examples.root / "examples" / "coding_agent"
    run = examples.run("-e", "docker", cwd=folder)
    assert run.exit_code == 5, run.output  # no judge key: the two gated judges are unavailable
    [attempt] = examples.query("attempts", "--experiment", "docker")
    stored = attempt["sandbox"] if isinstance(attempt["sandbox"], dict) else json.loads(attempt["sandbox"])
    assert stored["kind"] == "docker" and stored["image"] == "niceeval-example/coding-agent"
    states = _states(examples, "docker")
    assert {k: states[k] for k in ("Tests pass", "No secrets written", "NOTES.md written")} == {
        "Tests pass": "matched", "No secrets written": "matched", "NOTES.md written": "matched"}
    assert niceeval_containers(store=examples.store) == []


@pytest.mark.slow
@pytest.mark.parametrize(("experiment", "cli", "shell"),
                         [("claude-code", "claude", "Bash"), ("codex", "codex", "shell")])
def test_the_real_cli_experiments_run_offline_against_the_scripted_model(
        examples: Any, experiment: str, cli: str, shell: str) -> None:
    from tests.support.components import need_npm_cli

    need_npm_cli(cli)
    folder = examples.root / "examples" / "coding_agent"
    run = examples.run("-e", experiment, cwd=folder)
    assert run.exit_code == 5, run.output  # no judge key: the two gated judges are unavailable
    states = _states(examples, experiment)
    assert {k: states[k] for k in ("calc.py edited", "Tests pass", "No secrets written", "NOTES.md written")} == {
        "calc.py edited": "matched", "Tests pass": "matched", "No secrets written": "matched",
        "NOTES.md written": "matched"}
    calls = [e for e in examples.query("events", "--experiment", experiment) if e["kind"] == "tool_call"]
    assert [(c["name"], c["status"]) for c in calls] == [(shell, "completed"), (shell, "completed")]
    assert "sed -i" in json.dumps(calls[0]["input"]) and "NOTES.md" in json.dumps(calls[1]["input"])
