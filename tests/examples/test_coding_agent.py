"""examples/coding_agent (seed 002's operations notes): a coding agent in a fresh local sandbox per
attempt; tests run in the workspace, the diff is searched for secrets, NOTES.md goes to two judges."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest

from tests.support.loopback import JudgeServer, Reply

EVAL = "coding_agent/task"
LEAKED = "sk-live-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c"


@pytest.fixture
def own_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def _states(examples: Any, experiment: str) -> dict[str, str]:
    return {key: row["state"] for key, row in examples.assertions(experiment).items()}


def test_with_a_judge_the_good_agent_passes_and_each_broken_one_fails_its_own_gate(
        examples: Any, judge_server: JudgeServer, own_tmp: Path) -> None:
    judge_server.default = Reply.tool("Y", "explained")
    examples.use_judge(judge_server)
    run = examples.run("-e", "coding_agent", "-e", "coding_agent/")
    assert run.exit_code == 1, run.output
    assert examples.attempt("coding_agent")["state"] == "passed"
    assert _states(examples, "coding_agent") == {
        "calc.py edited": "matched", "Tests pass": "matched", "No secrets written": "matched",
        "NOTES.md written": "matched", "Install explained": "met", "Rollback explained": "met",
    }
    forgets = examples.attempt("coding_agent/forgets-notes")
    assert forgets["state"] == "failed" and "NOTES.md written" in forgets["stop_cause"]
    assert "Install explained" not in _states(examples, "coding_agent/forgets-notes")  # stopped before
    leaks = examples.assertions("coding_agent/leaks-key")["No secrets written"]
    assert examples.attempt("coding_agent/leaks-key")["state"] == "failed"
    assert leaks["state"] == "mismatched" and "settings.env:1" in leaks["explanation"]
    assert LEAKED not in json.dumps(leaks) and LEAKED not in run.output
    # one judge per criterion, each reading NOTES.md as read through t.sandbox
    questions = [json.dumps(r.json) for r in judge_server.grading_requests]
    assert len(questions) == 4  # two criteria × (coding_agent, leaks-key); forgets-notes stopped before
    assert sum("explain how to install the project?" in q for q in questions) == 2
    assert sum("explain how to roll the change back?" in q for q in questions) == 2
    assert all("git revert" in q for q in questions)
    assert list(own_tmp.glob("niceeval-sandbox-*")) == []


def test_each_attempt_sandbox_is_stored_and_nothing_is_left_behind(examples: Any, own_tmp: Path) -> None:
    run = examples.run("-e", "coding_agent", "-e", "coding_agent/", "--attempts", "2")
    assert run.exit_code == 1, run.output
    for attempt in examples.query("attempts", "--experiment", "coding_agent"):
        stored = attempt["sandbox"] if isinstance(attempt["sandbox"], dict) else json.loads(attempt["sandbox"])
        assert stored == {"kind": "local"}
    assert list(own_tmp.glob("niceeval-sandbox-*")) == []
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
