"""Issue 27, item 5: a promptfoo suite moved over unchanged, checked from the outside.

Each test is a case, each assertion a check; an unsupported type is `unavailable`; and because
the assertions live in the case's metadata, editing one of them re-executes that case (and only
that one) — a result is never reused after what decided it changed."""

from __future__ import annotations

import json

import pytest

from tests.support.project import Project


@pytest.fixture
def proj(project: Project) -> Project:
    """The CLI in process (tests/conftest.py `project`): these checks read exit codes, output and
    stored rows; what is about a process (signals, pipes) still starts the real `niceeval`."""
    return project


SUITE = """
from niceeval_cli import define_eval
from niceeval_cli.datasets import load_promptfoo
from niceeval_cli.expect import from_promptfoo


@define_eval(cases=load_promptfoo("tests.yaml"))
async def suite(t, case):
    turn = await t.send(case["question"])
    for n, assertion in enumerate(t.case_metadata["assert"], 1):
        t.check(turn.message, from_promptfoo(assertion)).label(f"{n} {assertion['type']}").gate()
"""

TESTS = """
- description: greeting
  vars:
    question: say hello
  assert:
    - type: icontains
      value: HELLO
- description: numbers
  vars:
    question: count
  assert:
    - type: regex
      value: "[0-9]+"
    - type: python
      value: len(output) < 5
"""


def _project(proj: Project) -> Project:
    proj.write("app.py", 'def reply(message: str) -> str:\n'
               '    return "Hello there" if "hello" in message else "1 2 3"\n')
    proj.write("niceeval.toml", '[project]\n\n[experiments.local]\nadapter = "python"\n'
               '[experiments.local.options]\ncallable = "app:reply"\n')
    proj.write("evals/suite.py", SUITE)
    proj.write("evals/tests.yaml", TESTS)
    return proj


def test_a_promptfoo_suite_runs_and_an_unsupported_type_is_unavailable(proj: Project) -> None:
    result = _project(proj).run()
    assert result.returncode == 5, result.stdout + result.stderr
    rows = {(r["eval_id"], r["label"]): (r["state"], r["reason"])
            for r in proj.sql("SELECT a.eval_id, r.label, r.state, r.reason FROM assertion_results r "
                              "JOIN attempts a ON a.id = r.attempt_id")}
    assert rows == {
        ("suite[greeting]", "1 icontains"): ("matched", None),
        ("suite[numbers]", "1 regex"): ("matched", None),
        ("suite[numbers]", "2 python"): ("unavailable", "unsupported-assertion:python"),
    }


def test_editing_an_assertion_reexecutes_that_case_only(proj: Project) -> None:
    _project(proj)
    proj.run()
    proj.write("evals/tests.yaml", TESTS.replace("value: HELLO", "value: GOODBYE"))
    plan = proj.cli("run", "--dry", "--json")
    assert plan.returncode == 0, plan.stderr
    planned = [json.loads(line) for line in plan.stdout.splitlines() if line.strip()]
    slots = next(event for event in planned if event.get("event") == "run.planned")["slots"]
    decisions = {slot["eval_id"]: slot.get("reason") or slot.get("plan_reason") for slot in slots}
    assert decisions["suite[greeting]"] == "fingerprint-changed"
    assert decisions["suite[numbers]"] in ("previous-errored", "rerun")  # errored: never reused anyway
    again = proj.run()
    states = {r["eval_id"]: r["state"] for r in proj.sql(
        "SELECT eval_id, state FROM attempts ORDER BY ended_at")}
    assert states["suite[greeting]"] == "failed", again.stdout
