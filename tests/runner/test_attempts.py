"""Attempts, 0-based ordinals and the per-eval fold with `pass_rule` (outcomes.md, "Several
attempts of one eval"; cli.md, exit codes)."""

from __future__ import annotations

import pytest

ORDINAL_APP = """
from niceeval_cli import define_adapter

adapter = define_adapter(name="ordinal", create=lambda ctx: ctx.attempt)
"""

SCRIPTED = """
from niceeval_cli.expect import equals
from ordinal_app import adapter

@adapter.define_eval()
def scripted(t):
    outcome = t.experiment.options["outcomes"][t.facts]
    if outcome == "error":
        raise RuntimeError("scripted error")
    t.check(outcome, equals("pass")).label("outcome")
"""


def write_scripted(project, outcomes: list[str], pass_rule: str) -> None:
    listed = ", ".join(f'"{o}"' for o in outcomes)
    project.write("niceeval.toml", f"""
        [experiments.local]
        attempts = {len(outcomes)}
        pass_rule = {pass_rule}
        max_concurrency = 1
        [experiments.local.options]
        outcomes = [{listed}]
    """)
    project.write("ordinal_app.py", ORDINAL_APP)
    project.write("evals/scripted.py", SCRIPTED)


@pytest.mark.parametrize(
    ("pass_rule", "outcomes", "exit_code"),
    [
        ('"any"', ["fail", "pass", "fail"], 0),
        ('"any"', ["fail", "error", "fail"], 1),
        ('"any"', ["error", "error"], 5),
        ('"any"', ["error", "pass"], 0),
        ('"all"', ["pass", "pass", "pass"], 0),
        ('"all"', ["pass", "fail", "pass"], 1),
        ('"all"', ["pass", "error"], 5),
        ("0.5", ["pass", "fail"], 0),
        ("0.5", ["pass", "fail", "fail"], 1),
        # errored attempts are evidence neither way (statistics.md's amendment): 1/1 decided passed
        ("0.5", ["pass", "error", "error"], 0),
        ("0.5", ["error", "error"], 5),
        ("0.5", ["pass", "fail", "fail", "error"], 1),
        ("0.6", ["pass", "pass", "error"], 0),
        ("1", ["pass", "fail"], 1),
    ],
)
def test_pass_rule_folds_attempts_into_the_exit_code(project, pass_rule, outcomes, exit_code):
    write_scripted(project, outcomes, pass_rule)
    result = project.run()
    assert result.exit_code == exit_code, result.stdout
    states = {a["ordinal"]: a["state"] for a in project.attempts()}
    expected = {"pass": "passed", "fail": "failed", "error": "errored"}
    assert states == {i: expected[o] for i, o in enumerate(outcomes)}


def test_default_pass_rule_is_any(project):
    project.write("niceeval.toml", """
        [experiments.local]
        attempts = 2
        [experiments.local.options]
        outcomes = ["fail", "pass"]
    """)
    project.write("ordinal_app.py", ORDINAL_APP)
    project.write("evals/scripted.py", SCRIPTED)
    assert project.run().exit_code == 0


def test_ordinals_are_zero_based_and_reach_the_adapter(project):
    write_scripted(project, ["pass", "pass", "pass"], '"all"')
    assert project.run().exit_code == 0
    attempts = sorted(project.attempts(), key=lambda a: a["ordinal"])
    assert [a["ordinal"] for a in attempts] == [0, 1, 2]
    assert len({a["id"] for a in attempts}) == 3
    assert len({a["fingerprint"] for a in attempts}) == 3  # the ordinal is part of the fingerprint


def test_attempts_flag_overrides_the_eval_and_the_experiment(project):
    project.write("niceeval.toml", "[project]\nattempts = 4\n")
    project.write("evals/counted.py", """
        from niceeval_cli import define_eval

        @define_eval(attempts=3)
        def counted(t):
            pass
    """)
    assert project.run().exit_code == 0
    assert sorted(a["ordinal"] for a in project.attempts()) == [0, 1, 2]
    assert project.run("--attempts", "2", "--rerun-all").exit_code == 0
    assert sorted(a["ordinal"] for a in project.attempts()) == [0, 1]


def test_each_experiment_runs_its_own_attempts(project):
    project.write("niceeval.toml", """
        [experiments.a]
        attempts = 1
        [experiments.b]
        attempts = 2
    """)
    project.write("evals/both.py", """
        from niceeval_cli import define_eval

        @define_eval()
        def both(t):
            pass
    """)
    assert project.run().exit_code == 0
    slots = sorted((a["experiment_id"], a["ordinal"]) for a in project.attempts())
    assert slots == [("a", 0), ("b", 0), ("b", 1)]


@pytest.mark.parametrize(
    ("body", "exit_code"),
    [
        ('t.check(1, equals(1)).score(5)\n    t.check(1, equals(1)).gate()', 0),
        ('t.check(1, equals(1)).score(5)\n    t.check(1, equals(2)).gate()', 1),
        ('t.score(NumericMaterial.unavailable("unknown"), weight=5)', 5),
        ('t.check(Fact.unavailable("unknown"), equals(1)).gate()', 5),
        ('raise RuntimeError("boom")', 5),
    ],
    ids=["scored-gate-passed", "gate-failed", "unrankable", "gate-unavailable", "errored"],
)
def test_score_attempts_map_to_exit_codes(project, body, exit_code):
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/score.py", f"""
from niceeval_cli import Fact, NumericMaterial, define_score_eval
from niceeval_cli.expect import equals

@define_score_eval()
def score(t):
    {body}
""")
    assert project.run().exit_code == exit_code


def test_a_definite_failure_outranks_an_undecided_result(project):
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/mixed.py", """
        from niceeval_cli import define_eval
        from niceeval_cli.expect import equals

        @define_eval()
        def fails(t):
            t.check(1, equals(2))

        @define_eval()
        def errors(t):
            raise RuntimeError("boom")
    """)
    assert project.run().exit_code == 1


def test_eval_attempts_override_the_experiment_and_the_project(project):
    project.write("niceeval.toml", "[project]\nattempts = 4\n[experiments.local]\nattempts = 2\n")
    project.write("evals/counted.py", """
        from niceeval_cli import define_eval

        @define_eval(attempts=3)
        def by_eval(t):
            pass

        @define_eval()
        def by_experiment(t):
            pass
    """)
    assert project.run().exit_code == 0
    counts: dict[str, int] = {}
    for attempt in project.attempts():
        counts[attempt["eval_id"]] = counts.get(attempt["eval_id"], 0) + 1
    assert counts == {"counted/by_eval": 3, "counted/by_experiment": 2}
