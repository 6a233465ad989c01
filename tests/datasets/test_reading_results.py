"""Reading the results of an eval with cases (datasets.md, "Reading the results"): the summary and
`view` group cases under their eval, failing cases first; `view @ATTEMPT` shows the case;
`query`, `run --dry --json` and JUnit name case eval ids."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

EVAL = """
from niceeval_cli import Case, define_eval, define_score_eval
from niceeval_cli.expect import equals

ROWS = [{"id": f"r-{n:02d}", "answer": "30 days"} for n in range(1, 8)]
ROWS[4]["answer"] = "14 days"   # r-05 fails
ROWS[1]["answer"] = "boom"      # r-02 errors


@define_eval(cases=ROWS)
def refund(t, case):
    if case["answer"] == "boom":
        raise RuntimeError("the bot crashed")
    t.check(case["answer"], equals("30 days")).label("States 30 days")


@define_score_eval(cases=[Case("short", 1), Case("long", 0)])
def length(t, case):
    t.check(case, equals(1)).score(1).gate().label("is one")
"""


@pytest.fixture
def ran(project):
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/refunds.py", EVAL)
    return project.run()


def test_the_summary_groups_cases_under_their_eval_failing_cases_first(ran):
    assert ran.exit_code == 1, ran.stdout
    text = ran.stdout
    assert "cases     refunds/refund: 5 of 7 cases passed · 1 errored, 1 failed" in text
    assert "cases     refunds/length: 1 of 2 cases scored · 1 gate failed" in text
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if "refunds/refund: 5 of 7 cases passed" in line)
    assert [line.split() for line in lines[start + 1:start + 3]] == [["errored", "r-02"], ["failed", "r-05"]]


def test_view_shows_the_same_grouping(ran, project):
    view = project.cli("view")
    assert view.exit_code == 0
    assert "refunds/refund: 5 of 7 cases passed · 1 errored, 1 failed" in view.stdout
    assert "FAILED  default · refunds/refund[r-05]#0" in view.stdout


def test_view_of_one_attempt_shows_its_case_id_and_value(ran, project):
    [attempt] = [a for a in project.attempts() if a["case_id"] == "r-05"]
    detail = project.cli("view", f"@{attempt['id']}").stdout
    assert "eval         refunds/refund[r-05] #0 (pass-style)" in detail
    assert "case         r-05" in detail
    assert '"answer": "14 days"' in detail


def test_query_names_case_eval_ids_and_filters_by_prefix(ran, project):
    ids = {a["eval_id"] for a in project.attempts()}
    assert "refunds/refund[r-01]" in ids and "refunds/length[short]" in ids
    only = project.attempts("--eval", "refunds/refund[r-0")
    assert {a["case_id"] for a in only} == {f"r-{n:02d}" for n in range(1, 8)}


def test_junit_has_one_testcase_per_case_eval(ran, project, tmp_path):
    out = tmp_path / "junit.xml"
    project.run("--junit", str(out))
    cases = {c.get("name"): c for c in ET.parse(out).getroot().iter("testcase")}
    assert "refunds/refund[r-05]" in cases and "refunds/refund[r-01]" in cases
    assert cases["refunds/refund[r-05]"].find("failure") is not None
    assert cases["refunds/refund[r-01]"].find("failure") is None


def test_the_dry_plan_names_the_case_of_each_slot(ran, project):
    result = project.run("--dry", "--json")
    [event] = [json.loads(line) for line in result.stdout.splitlines()]
    slots = {s["eval_id"]: s for s in event["slots"]}
    assert slots["refunds/refund[r-05]"]["case_id"] == "r-05"
    assert slots["refunds/refund[r-05]"]["plan_reason"] == "reused"  # failed is decided: reused
    assert slots["refunds/refund[r-02]"]["plan_reason"] == "previous-errored"


def test_more_than_ten_failing_cases_are_counted_not_listed(project):
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/many.py", """
        from niceeval_cli import define_eval
        from niceeval_cli.expect import equals

        @define_eval(cases={f"c{n:02d}": n for n in range(30)})
        def many(t, case):
            t.check(case % 2, equals(0))
    """)
    result = project.run()
    assert "many: 15 of 30 cases passed · 15 failed" in result.stdout
    assert "… 5 more not passing (niceeval view lists them all)" in result.stdout
    listed = [line.split()[1] for line in result.stdout.splitlines() if line.strip().startswith("failed  c")]
    assert listed == [f"c{n:02d}" for n in range(1, 21, 2)]


def test_view_and_query_take_the_same_glob_selectors_as_run(ran, project):
    only = project.attempts("--eval", "refunds/refund[r-0[45]]")  # no glob: a literal prefix, nothing
    assert only == []
    picked = project.attempts("--eval", "refunds/refund[r-0*]", "--eval", "*[long]")
    assert {a["eval_id"] for a in picked} == {*(f"refunds/refund[r-{n:02d}]" for n in range(1, 8)),
                                               "refunds/length[long]"}
    view = project.cli("view", "--eval", "*[r-05]")
    assert "refunds/refund[r-05]" in view.stdout and "refunds/refund[r-01]" not in view.stdout
