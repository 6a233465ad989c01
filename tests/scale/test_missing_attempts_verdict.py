"""An eval some of whose attempts never ran — a shard group still missing a shard, a run whose
`--budget` was spent — is decided only as far as the missing attempts could not change it
(scale.md, "Reading a group"; cli.md, "--budget USD"): the exit code is 1 only for a failure no
missing attempt could undo."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from tests.support.project import Project

EVAL = """
from niceeval_cli import define_eval
from niceeval_cli.expect import equals


@define_eval()
async def g(t):
    turn = await t.send("q")
    t.check(turn.message, equals("yes")).label("Says yes")
"""


def _project(project: Project, rule: str) -> None:
    project.write("app.py", "import os\n\n\ndef reply(message):\n    return os.environ['ANSWER']\n")
    project.write("evals/g.py", EVAL)
    project.write("niceeval.toml", f'[project]\nattempts = 4\npass_rule = {rule}\n[experiments.local]\n'
                  'adapter = "python"\n[experiments.local.options]\ncallable = "app:reply"\n')
    # shard 1 of 2 holds g#1 alone (the plan's stable partition), and fails it; shard 2 passes g#0, g#2, g#3
    assert project.run("--shard", "1/2", "--store", "one.db", env={"ANSWER": "no"}).exit_code == 1
    assert project.run("--shard", "2/2", "--store", "two.db", env={"ANSWER": "yes"}).exit_code == 0
    assert [r["ordinal"] for r in project.sql("SELECT ordinal FROM attempts", store=project.root / "one.db")] == [1]


def test_a_failure_the_missing_shard_can_still_undo_is_not_definite(project: Project) -> None:
    """Under "any", g's one sealed attempt failed while three are missing: the group exited 1, "a
    definite failure", though the missing shard passes g. It is undecided (5) until the shard comes."""
    _project(project, '"any"')
    partial = project.cli("merge", "one.db", "--into", "partial.db", "--exit-code", "--junit", "partial.xml")
    assert partial.exit_code == 5, partial.stdout + partial.stderr
    assert "definite failure" not in partial.stdout
    root = ET.parse(project.root / "partial.xml").getroot()  # JUnit counts what the exit code counts
    assert (root.get("tests"), root.get("failures"), root.get("errors"), root.get("skipped")) == ("4", "0", "1", "3")
    (error,) = root.iter("error")
    assert error.get("type") == "not decided" and "3 not run could change it" in (error.get("message") or "")
    complete = project.cli("merge", "one.db", "two.db", "--into", "complete.db", "--exit-code")
    assert complete.exit_code == 0, complete.stdout + complete.stderr


def test_a_failure_no_missing_attempt_can_undo_is_definite(project: Project) -> None:
    """Under "all" the same failed attempt decides g whatever the missing shard holds: exit 1 at once."""
    _project(project, '"all"')
    partial = project.cli("merge", "one.db", "--into", "partial.db", "--exit-code")
    assert partial.exit_code == 1, partial.stdout + partial.stderr
    assert project.cli("merge", "one.db", "two.db", "--into", "complete.db", "--exit-code").exit_code == 1


PAID_AGENT = """
from niceeval_cli import Turn, Usage, define_adapter


async def send(ctx, message):
    return Turn(input=message, message="no", usage=Usage(input_tokens=10, output_tokens=0, cost_usd=1.0))

adapter = define_adapter(name="paid", send=send)
"""

PAID_EVAL = """
from niceeval_cli.expect import equals
from agent import adapter


async def test(t):
    turn = await t.send("q")
    t.check(turn.message, equals("ok")).label("answer")

e0 = adapter.define_eval(test=test, name="e0")
"""


def test_a_budget_spent_after_one_failed_attempt_of_three_decides_nothing_under_any(project: Project) -> None:
    """$1 an attempt, a $0.50 budget: e's first attempt fails and the other two never start. Under
    "any" they could pass it: the run exited 1, "a definite failure"; it is undecided (5) and says why."""
    project.write("agent.py", PAID_AGENT)
    project.write("evals/e.py", PAID_EVAL)
    project.write("niceeval.toml", '[project]\nmax_concurrency = 1\nattempts = 3\npass_rule = "any"\n'
                  "[experiments.paid]\n")
    result = project.run("--budget", "0.5")
    assert result.exit_code == 5, result.stdout + result.stderr
    assert "1 eval failed so far, but attempts that never ran could still change it" in result.stdout
    project.write("niceeval.toml", '[project]\nmax_concurrency = 1\nattempts = 3\npass_rule = "all"\n'
                  "[experiments.paid]\n")
    assert project.run("--budget", "0.5", "--rerun-all").exit_code == 1  # under "all" one failure decides


def test_compare_against_a_group_missing_a_shard_does_not_call_its_partial_failure_a_regression(
        project: Project) -> None:
    """BASE passes g in all four attempts; NEW is the group with only shard 1 merged (g#1 failed,
    three not run). Under "any" that is no verdict yet: `compare` classed the pair `regressed` and
    `--fail-on regressed` exited 1; it is `undecided` now, its side saying `3 not run`."""
    _project(project, '"any"')
    assert project.run("--store", "base.db", env={"ANSWER": "yes"}).exit_code == 0
    for source in ("base.db", "one.db"):
        assert project.cli("merge", source, "--into", "both.db").exit_code == 0, source
    runs = project.sql("SELECT id, shard_count FROM runs", store=project.root / "both.db")
    base = next(r["id"] for r in runs if r["shard_count"] is None)
    group = project.query_json("runs", "--store", "both.db")
    new = next(r["id"] for r in group if r["kind"] == "group")
    gate = project.cli("compare", base, new, "--store", "both.db", "--fail-on", "regressed")
    assert gate.exit_code == 0, gate.stdout + gate.stderr
    assert "1 undecided" in gate.stdout and "(0/1 passed · 3 not run)" in gate.stdout, gate.stdout
    assert "gate passed without weighing 1 pair undecided now" in gate.stderr


def test_a_pass_the_missing_attempts_could_still_undo_is_said_so_in_the_summary_and_the_group_view(
        project: Project) -> None:
    """Under "all", g passing so far is not passed while attempts never ran: the summary said
    `1 eval: 1 passed · exit 5 (something could not be decided)` with no reason (its eval whose
    every attempt passed was counted passed), and the group's `view` and the report the same."""
    project.write("agent.py", PAID_AGENT.replace('message="no"', 'message="ok"'))
    project.write("evals/e.py", PAID_EVAL)
    project.write("niceeval.toml", '[project]\nmax_concurrency = 1\nattempts = 3\npass_rule = "all"\n'
                  "[experiments.paid]\n")
    result = project.run("--budget", "0.5")
    assert result.exit_code == 5, result.stdout + result.stderr
    said = "1 eval passed so far, but attempts that never ran could still change it"
    assert said in result.stdout, result.stdout
    assert said in project.cli("view").stdout  # the run's page tells the same story
    assert project.cli("report", "--out", "budget.html").exit_code == 0  # and so does its report
    assert said in (project.root / "budget.html").read_text()
    project.write("niceeval.toml", '[project]\nmax_concurrency = 1\nattempts = 3\npass_rule = "any"\n'
                  "[experiments.paid]\n")
    definite = project.run("--budget", "0.5", "--rerun-all")  # under "any" one pass decides
    assert definite.exit_code == 5 and said not in definite.stdout, definite.stdout  # 5: slots never started
    shards = Project(project.root.parent / "shards", in_process=True)
    _project(shards, '"all"')  # shard 2 passes g#0, g#2, g#3; shard 1 (g#1) never merged
    assert shards.cli("merge", "two.db", "--into", "partial.db").exit_code == 0
    group = next(r["id"] for r in shards.query_json("runs", "--store", "partial.db") if r["kind"] == "group")
    view = shards.cli("view", group, "--store", "partial.db")
    assert said in view.stdout, view.stdout
