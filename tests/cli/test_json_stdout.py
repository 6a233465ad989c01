"""`run --json` and `list --json` keep stdout for JSON: what eval and agent code print (a
debugging `print()`) goes to stderr, so `niceeval run --json | jq` still reads every line."""

from __future__ import annotations

import json

from tests.support.project import Project

TOML = """\
[experiments.local]
adapter = "python"
[experiments.local.options]
callable = "agent:reply"
"""
AGENT = """\
def reply(prompt):
    print("agent says hi")
    return prompt
"""
EVAL = """\
print("module imported")
from niceeval_cli import define_eval
from niceeval_cli.expect import equals

@define_eval()
async def echo(t):
    print("test running")
    t.check((await t.send("hi")).message, equals("hi"))
"""


def _noisy(project: Project) -> Project:
    project.write("niceeval.toml", TOML)
    project.write("agent.py", AGENT)
    project.write("evals/echo.py", EVAL)
    return project


def test_run_json_stdout_is_only_ndjson_and_prints_go_to_stderr(project: Project) -> None:
    run = _noisy(project).run("--json")
    assert run.exit_code == 0, (run.stdout, run.stderr)
    events = [json.loads(line) for line in run.stdout.splitlines()]
    assert [e["event"] for e in events] == ["run.planned", "attempt.started", "attempt.sealed", "run.finished"]
    assert run.stderr.splitlines() == ["module imported", "test running", "agent says hi"]
    dry = project.run("--json", "--dry", "--rerun-all")
    assert [json.loads(line)["event"] for line in dry.stdout.splitlines()] == ["run.planned"]
    assert dry.stderr.splitlines() == ["module imported"]


def test_list_json_stdout_is_one_json_document(project: Project) -> None:
    listed = _noisy(project).cli("list", "--json")
    assert listed.exit_code == 0, (listed.stdout, listed.stderr)
    assert [e["id"] for e in json.loads(listed.stdout)["evals"]] == ["echo"]
    assert listed.stderr.splitlines() == ["module imported"]


def test_without_json_what_eval_code_prints_stays_on_stdout(project: Project) -> None:
    run = _noisy(project).run()
    assert run.exit_code == 0, (run.stdout, run.stderr)
    assert "test running" in run.stdout and "test running" not in run.stderr
