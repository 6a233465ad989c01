"""`niceeval list` with cases (datasets.md, "Reading the results"): one line per eval with its
number of cases, `--cases` one per case, and a warning for ids that are row positions."""

from __future__ import annotations

import json

import pytest


@pytest.fixture
def listed(project):
    project.write("niceeval.toml", """
        [project]
        [experiments.all]
        [experiments.slow]
        tags = ["slow"]
    """)
    project.write("evals/refunds.py", """
        from niceeval_cli import Case, define_eval
        from niceeval_cli.expect import equals

        @define_eval(tags=["refunds"], cases=[Case("r-1", 1, tags=["slow"], metadata={"ticket": 12}), Case("r-2", 2)])
        def refund(t, case):
            t.check(case, equals(case))

        @define_eval(cases=["a", "b", "c"])
        def positional(t, case):
            t.check(case, equals(case))

        @define_eval()
        def plain(t):
            t.check(1, equals(1))
    """)

    def go(*args: str) -> dict:
        result = project.cli("list", "--json", *args)
        assert result.exit_code == 0, result.stderr
        return json.loads(result.stdout)

    return go


def test_list_gives_one_record_per_eval_with_its_number_of_cases(listed):
    data = listed()
    assert [(e["id"], e["cases"], e["tags"]) for e in data["evals"]] == [
        ("refunds/plain", None, []),
        ("refunds/positional", 3, []),
        ("refunds/refund", 2, ["refunds"]),
    ]


def test_list_cases_gives_one_record_per_case_with_its_tags_and_metadata(listed):
    data = listed("--cases")
    records = {e["id"]: e for e in data["evals"]}
    assert list(records) == [
        "refunds/plain", "refunds/positional[0]", "refunds/positional[1]", "refunds/positional[2]",
        "refunds/refund[r-1]", "refunds/refund[r-2]",
    ]
    first = records["refunds/refund[r-1]"]
    assert (first["eval_id"], first["case_id"], first["tags"], first["metadata"]) == (
        "refunds/refund", "r-1", ["refunds", "slow"], {"ticket": 12},
    )
    assert records["refunds/plain"]["case_id"] is None


def test_an_experiment_selects_cases_by_their_own_tags(listed):
    grouped = {x["id"]: x for x in listed()["experiments"]}
    assert grouped["slow"]["selected_evals"] == ["refunds/refund"]
    assert grouped["slow"]["selected_cases"] == 1
    assert grouped["all"]["selected_cases"] == 5
    per_case = {x["id"]: x for x in listed("--cases")["experiments"]}
    assert per_case["slow"]["selected_evals"] == ["refunds/refund[r-1]"]


def test_positional_ids_are_warned_about(listed, project):
    assert listed()["warnings"] == [
        "eval 'refunds/positional': its case ids are row positions (0, 1, 2, …): inserting or removing a "
        "row renames every case after it, and those re-run; give each row an \"id\" field, or pass "
        "case_id= (or id= to the loader)"
    ]
    text = project.cli("list").stdout
    assert "warning: eval 'refunds/positional': its case ids are row positions" in text


def test_the_text_listing_has_a_cases_column_and_counts_cases_per_experiment(listed, project):
    text = project.cli("list").stdout
    lines = text.splitlines()
    header = next(line for line in lines if line.strip().startswith("id") and "cases" in line)
    assert header.split()[:3] == ["id", "kind", "cases"]
    refund = next(line for line in lines if line.strip().startswith("refunds/refund "))
    assert refund.split()[:3] == ["refunds/refund", "pass", "2"]
    assert "3 selected (5 cases)" in text
    cases = project.cli("list", "--cases").stdout
    assert "6 eval(s) under evals (5 cases of 2 evals, one line each):" in cases
    assert "refunds/refund[r-1]" in cases
