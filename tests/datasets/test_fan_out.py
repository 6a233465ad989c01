"""Fan-out through the real CLI (datasets.md, "Ids, selection, reuse"): an eval with cases runs as
one case eval `<eval id>[<case id>]` per case; editing one row re-runs that case only, adding
rows runs only the new ones, and `run --dry --json` says why."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest

EVAL = """
    from niceeval_cli import define_eval
    from niceeval_cli.datasets import load_jsonl
    from niceeval_cli.expect import equals

    @define_eval(cases=load_jsonl("refunds.jsonl"), tags=["refunds"])
    def refund(t, case):
        t.check(case["answer"], equals(case["expected"])).label("answer")
"""


def rows_text(rows: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(row) + "\n" for row in rows)


def row(case_id: str, answer: str = "30 days", expected: str = "30 days") -> dict[str, Any]:
    return {"id": case_id, "answer": answer, "expected": expected}


@pytest.fixture
def dataset(project):
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/refunds.py", EVAL)

    def write(rows: list[dict[str, Any]]) -> None:
        project.write("evals/refunds.jsonl", rows_text(rows))

    return write


def fresh(project) -> None:
    """Forget the project's modules, as the next `niceeval` process would (the CLI runs in-process)."""
    root = str(project.root.resolve())
    for name, module in list(sys.modules.items()):
        if (getattr(module, "__file__", None) or "").startswith(root):
            del sys.modules[name]


def run(project, *args: str):
    fresh(project)
    return project.run(*args)


def plan(project, *args: str) -> dict[str, tuple[str, tuple[str, ...]]]:
    """`run --dry --json`: eval id → (plan reason, changed parts)."""
    result = run(project, "--dry", "--json", *args)
    assert result.exit_code == 0, (result.stdout, result.stderr)
    [event] = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
    assert event["event"] == "run.planned"
    return {s["eval_id"]: (s["plan_reason"], tuple(s["changed"])) for s in event["slots"]}


def stored(project) -> dict[str, str]:
    """Each attempt sealed by the latest run: eval id → relation (origin / reference)."""
    return {a["eval_id"]: a["relation"] for a in project.attempts()}


def test_each_case_is_its_own_eval_named_eval_id_bracket_case_id(project, dataset):
    dataset([row("r-1"), row("r-2"), row("r-3", answer="14 days")])
    result = run(project)
    assert result.exit_code == 1, result.stdout
    states = {a["eval_id"]: a["state"] for a in project.attempts()}
    assert states == {"refunds[r-1]": "passed", "refunds[r-2]": "passed", "refunds[r-3]": "failed"}


def test_editing_one_row_reruns_that_case_only(project, dataset):
    dataset([row("r-1"), row("r-2"), row("r-3")])
    assert run(project).exit_code == 0
    dataset([row("r-1"), row("r-2", answer="14 days"), row("r-3")])
    assert plan(project) == {
        "refunds[r-1]": ("reused", ()),
        "refunds[r-2]": ("fingerprint-changed", ("case",)),
        "refunds[r-3]": ("reused", ()),
    }
    assert run(project).exit_code == 1
    assert stored(project) == {"refunds[r-1]": "reference", "refunds[r-2]": "origin", "refunds[r-3]": "reference"}


def test_adding_rows_runs_only_the_new_ones_wherever_they_are_inserted(project, dataset):
    dataset([row("r-1"), row("r-3")])
    assert run(project).exit_code == 0
    dataset([row("r-0"), row("r-1"), row("r-2"), row("r-3"), row("r-4")])
    assert plan(project) == {
        "refunds[r-0]": ("new", ()),
        "refunds[r-1]": ("reused", ()),
        "refunds[r-2]": ("new", ()),
        "refunds[r-3]": ("reused", ()),
        "refunds[r-4]": ("new", ()),
    }


def test_removing_a_row_removes_its_case_and_reuses_the_rest(project, dataset):
    dataset([row("r-1"), row("r-2"), row("r-3")])
    assert run(project).exit_code == 0
    dataset([row("r-1"), row("r-3")])
    assert plan(project) == {"refunds[r-1]": ("reused", ()), "refunds[r-3]": ("reused", ())}
    assert run(project).exit_code == 0
    assert stored(project) == {"refunds[r-1]": "reference", "refunds[r-3]": "reference"}


def test_reordering_rows_changes_nothing(project, dataset):
    dataset([row("r-1"), row("r-2")])
    assert run(project).exit_code == 0
    dataset([row("r-2"), row("r-1")])
    assert set(plan(project).values()) == {("reused", ())}


def test_a_key_order_or_whitespace_change_in_a_row_is_not_an_edit(project, dataset):
    dataset([row("r-1")])
    assert run(project).exit_code == 0
    project.write("evals/refunds.jsonl", '{"expected": "30 days",   "answer": "30 days", "id": "r-1"}\n')
    assert plan(project) == {"refunds[r-1]": ("reused", ())}


def test_positional_ids_shift_when_a_row_is_inserted(project):
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/plain.py", """
        from niceeval_cli import define_eval
        from niceeval_cli.datasets import load_jsonl
        from niceeval_cli.expect import is_true

        @define_eval(cases=load_jsonl("rows.jsonl"))
        def plain(t, case):
            t.check(bool(case), is_true())
    """)
    project.write("evals/rows.jsonl", '"a"\n"b"\n')
    assert run(project).exit_code == 0
    project.write("evals/rows.jsonl", '"new"\n"a"\n"b"\n')
    assert plan(project) == {
        "plain[0]": ("fingerprint-changed", ("case",)),
        "plain[1]": ("fingerprint-changed", ("case",)),
        "plain[2]": ("new", ()),
    }


def test_editing_the_eval_module_reruns_every_case(project, dataset):
    dataset([row("r-1"), row("r-2")])
    assert run(project).exit_code == 0
    project.write("evals/refunds.py", EVAL + "    # an edit\n")
    assert set(plan(project).values()) == {("fingerprint-changed", ("source:evals/refunds.py",))}


# --- selection ---------------------------------------------------------------------------------


@pytest.fixture
def many(dataset):
    dataset([row(f"r-{n:03d}") for n in (1, 2, 10, 11, 12, 20)])


def test_the_eval_id_as_a_prefix_selects_every_case(project, many):
    assert len(plan(project, "refunds")) == 6


@pytest.mark.parametrize(
    ("selector", "selected"),
    [
        ("refunds[r-01*]", ["refunds[r-010]", "refunds[r-011]", "refunds[r-012]"]),
        ("refunds[r-0?0]", ["refunds[r-010]", "refunds[r-020]"]),
        ("*[r-002]", ["refunds[r-002]"]),
        ("refunds[r-001]", ["refunds[r-001]"]),  # an exact case eval id is a prefix of itself
    ],
)
def test_a_glob_matches_the_whole_case_eval_id_with_brackets_literal(project, many, selector, selected):
    assert sorted(plan(project, selector)) == selected


def test_nothing_matching_the_glob_is_a_configuration_error(project, many):
    result = run(project, "refunds[x*]")
    assert result.exit_code == 2
    assert "nothing selected" in result.stderr


def test_per_case_tags_add_to_the_eval_tags_and_select_with_tag(project):
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/tagged.py", """
        from niceeval_cli import Case, define_eval
        from niceeval_cli.expect import equals

        @define_eval(tags=["refunds"], cases=[Case("a", 1, tags=["slow"]), Case("b", 2), Case("c", 3, tags=["slow"])])
        def tagged(t, case):
            t.check(case, equals(case))
    """)
    assert sorted(plan(project, "--tag", "slow")) == ["tagged[a]", "tagged[c]"]
    assert len(plan(project, "--tag", "refunds")) == 3


def test_an_experiment_evals_entry_may_be_a_glob(project, many):
    project.write("niceeval.toml", """
        [project]
        [experiments.some]
        evals = ["refunds[r-00*]"]
    """)
    assert sorted(plan(project)) == ["refunds[r-001]", "refunds[r-002]"]


# --- the test function -------------------------------------------------------------------------


def test_the_test_receives_the_case_value_and_t_case_id(project):
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/echo.py", """
        from niceeval_cli import define_score_eval
        from niceeval_cli.expect import equals

        @define_score_eval(cases={"一": {"n": 1}, "two[2]": {"n": 2}})
        async def echo(t, case):
            t.check(t.case_id, equals(t.case_id)).label(f"id={t.case_id} n={case['n']}").score(1)
    """)
    assert run(project).exit_code == 0
    labels = {r["eval_id"]: r["label"] for r in project.assertions()}
    assert labels == {"echo[一]": "id=一 n=1", "echo[two[2]]": "id=two[2] n=2"}


def test_an_eval_without_cases_has_no_case_id(project):
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/plain.py", """
        from niceeval_cli import define_eval
        from niceeval_cli.expect import equals

        @define_eval()
        def plain(t):
            t.check(t.case_id, equals(None)).label("no case")
    """)
    assert run(project).exit_code == 0
    assert [a["eval_id"] for a in project.attempts()] == ["plain"]


def test_per_eval_settings_apply_to_every_case(project):
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/twice.py", """
        from niceeval_cli import define_eval
        from niceeval_cli.expect import equals

        @define_eval(cases={"a": 1, "b": 2}, attempts=2)
        def twice(t, case):
            t.check(case, equals(case))
    """)
    assert sorted((a["eval_id"], a["ordinal"]) for a in (run(project) and project.attempts())) == [
        ("twice[a]", 0), ("twice[a]", 1), ("twice[b]", 0), ("twice[b]", 1),
    ]
