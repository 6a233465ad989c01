"""`niceeval run` (cli.md): NDJSON events, exit codes, and the human summary that lists what
went wrong first."""

from __future__ import annotations

import json

import pytest

MIXED = """
from niceeval_cli import Fact, define_eval, define_score_eval
from niceeval_cli.expect import equals


@define_eval()
def a_passes(t):
    t.check(1, equals(1)).label("fine")


@define_eval()
def b_fails(t):
    t.check("refund in 14 days", equals("refund in 30 days")).label("Mentions 30 days")
    t.check(1, equals(1)).label("fine too")


@define_score_eval()
def c_scores(t):
    t.check(1, equals(1)).score(5).label("Participation")
    t.score(Fact.unavailable("completion-unobserved"), weight=50).label("Completion")
"""



def events_of(stdout: str) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


def test_json_prints_one_event_per_line_each_with_event_and_run_id(project):
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/mixed.py", MIXED)
    result = project.run("--json")
    assert result.exit_code == 1
    events = events_of(result.stdout)
    names = [e["event"] for e in events]
    assert names[0] == "run.planned"
    assert names[-1] == "run.finished"
    assert names.count("attempt.started") == 3
    assert names.count("attempt.sealed") == 3
    run_id = project.query("runs")[0]["id"]
    assert all(e["run_id"] == run_id for e in events)
    assert events[-1]["exit_code"] == 1


def test_json_events_carry_the_plan_the_sealed_rows_and_the_counts(project):
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/mixed.py", MIXED)
    events = events_of(project.run("--json").stdout)
    planned = events[0]
    assert len(planned["slots"]) == 3
    sealed = {e["attempt"]["eval_id"]: e for e in events if e["event"] == "attempt.sealed"}
    assert set(sealed) == {"mixed/a_passes", "mixed/b_fails", "mixed/c_scores"}
    fails = sealed["mixed/b_fails"]
    assert fails["attempt"]["state"] == "failed"
    assert [r["label"] for r in fails["assertions"]] == ["Mentions 30 days", "fine too"]
    assert fails["assertions"][0]["state"] == "mismatched"
    scores = sealed["mixed/c_scores"]["attempt"]
    assert (scores["state"], scores["score"], scores["unavailable_weight"]) == ("unrankable", 5, 50)
    stored = {a["eval_id"]: a["id"] for a in project.attempts()}
    assert {k: e["attempt"]["id"] for k, e in sealed.items()} == stored
    started = [i for i, e in enumerate(events) if e["event"] == "attempt.started" and e["eval_id"] == "mixed/b_fails"]
    sealed_at = [i for i, e in enumerate(events)
                 if e["event"] == "attempt.sealed" and e["attempt"]["eval_id"] == "mixed/b_fails"]
    assert started[0] < sealed_at[0]


def test_json_output_is_only_ndjson(project):
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/mixed.py", MIXED)
    result = project.run("--json")
    for line in result.stdout.splitlines():
        assert isinstance(json.loads(line), dict)


def test_summary_lists_failed_and_undecided_attempts_with_their_assertions_first(project):
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/mixed.py", MIXED)
    result = project.run()
    assert result.exit_code == 1
    out = result.stdout
    run_id = project.query("runs")[0]["id"]
    assert "mixed/b_fails" in out
    assert "Mentions 30 days" in out
    assert "mixed/c_scores" in out
    assert "Completion" in out and "completion-unobserved" in out
    assert "not rankable" in out
    assert run_id in out
    assert f"niceeval view {run_id}" in out
    # the failure detail comes before the totals line that names the run
    assert out.index("Mentions 30 days") < out.rindex(run_id)
    assert "fine too" not in out  # passing assertions are not listed


def test_summary_shows_measurement_against_threshold_and_reason(project):
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/measured.py", """
        from niceeval_cli import define_eval
        from niceeval_cli.expect import similarity

        @define_eval()
        def measured(t):
            t.check("abcd", similarity("abxy").at_least(0.8)).gate().label("Close to reference")
    """)
    result = project.run()
    assert result.exit_code == 1
    assert "Close to reference" in result.stdout
    assert "0.50" in result.stdout and "0.80" in result.stdout


def test_exit_0_when_everything_passed(project):
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/ok.py", """
        from niceeval_cli import define_eval, define_score_eval
        from niceeval_cli.expect import equals

        @define_eval()
        def passes(t):
            t.check(1, equals(1))

        @define_score_eval()
        def scores(t):
            t.check(1, equals(2)).score(5)
            t.check(1, equals(1)).gate()
    """)
    assert project.run().exit_code == 0


def test_exit_5_when_nothing_failed_but_something_could_not_be_decided(project):
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/undecided.py", """
        from niceeval_cli import Fact, define_eval
        from niceeval_cli.expect import equals

        @define_eval()
        def passes(t):
            t.check(1, equals(1))

        @define_eval()
        def unknown(t):
            t.check(Fact.unavailable("log-missing"), equals(1))
    """)
    assert project.run().exit_code == 5
    states = {a["eval_id"]: (a["state"], a["reason"]) for a in project.attempts()}
    assert states["undecided/unknown"] == ("errored", "evidence-unavailable")


def test_unknown_flag_is_a_usage_error(project):
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/ok.py", """
        from niceeval_cli import define_eval

        @define_eval()
        def ok(t):
            pass
    """)
    result = project.run("--no-such-flag")
    assert result.exit_code == 2
    assert "--no-such-flag" in result.stdout + result.stderr


@pytest.mark.parametrize("args", [("--attempts", "0"), ("--max-concurrency", "zero"), ("--timeout", "-5")])
def test_invalid_flag_values_are_usage_errors(project, args):
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/ok.py", """
        from niceeval_cli import define_eval

        @define_eval()
        def ok(t):
            pass
    """)
    assert project.run(*args).exit_code == 2


def test_prefix_tag_and_experiment_select_what_runs(project):
    project.write("niceeval.toml", """
        [experiments."models/a"]
        model = "a"
        [experiments."models/b"]
        model = "b"
        [experiments.other]
        model = "c"
    """)
    project.write("evals/support/refund.py", """
        from niceeval_cli import define_eval

        @define_eval(tags=["smoke"])
        def refund(t):
            pass
    """)
    project.write("evals/billing.py", """
        from niceeval_cli import define_eval

        @define_eval()
        def billing(t):
            pass
    """)
    assert project.run("support/", "-e", "models/").exit_code == 0
    assert sorted((a["experiment_id"], a["eval_id"]) for a in project.attempts()) == [
        ("models/a", "support/refund"), ("models/b", "support/refund"),
    ]
    assert project.run("--tag", "smoke", "-e", "other").exit_code == 0
    assert [(a["experiment_id"], a["eval_id"]) for a in project.attempts()] == [("other", "support/refund")]


def test_nothing_selected_is_a_usage_error(project):
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/ok.py", """
        from niceeval_cli import define_eval

        @define_eval()
        def ok(t):
            pass
    """)
    for args in (("no-such-prefix/",), ("--tag", "missing"), ("-e", "no-such-experiment")):
        result = project.run(*args)
        assert result.exit_code == 2, args
        assert "Traceback" not in result.stderr
    assert project.cli("query", "runs", "--format", "json").stdout.strip() in ("", "[]")


def test_version_flag(project):
    result = project.cli("--version")
    assert result.exit_code == 0
    assert "niceeval" in result.stdout


def test_summary_makes_control_characters_visible_and_trims_long_text(project):
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/nasty.py", r"""
        from niceeval_cli import define_adapter

        def create(ctx):
            raise RuntimeError("bad \x1b[2J\r" + "y" * 3000)

        adapter = define_adapter(name="nasty", create=create)

        @adapter.define_eval()
        def nasty(t):
            pass
    """)
    result = project.run()
    assert result.exit_code == 5
    assert "\x1b" not in result.stdout and "\r" not in result.stdout
    assert "\\x1b" in result.stdout
    assert "y" * 3000 not in result.stdout
    assert "[+" in result.stdout and "chars]" in result.stdout
    [attempt] = project.attempts()
    assert attempt["error"] == "RuntimeError: bad \x1b[2J\r" + "y" * 3000 + " (at evals/nasty.py:4)"  # unchanged


def test_summary_lists_attempts_worst_first(project):
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/order.py", """
        from niceeval_cli import Fact, define_eval, define_score_eval
        from niceeval_cli.expect import equals

        @define_score_eval()
        def a_gate_failed(t):
            t.check(1, equals(2)).gate().label("gate label")

        @define_score_eval()
        def b_unrankable(t):
            t.score(Fact.unavailable("unknown-ratio"), weight=5).label("ratio label")

        @define_eval()
        def c_failed(t):
            t.check(1, equals(2)).label("failed label")

        @define_eval()
        def d_errored(t):
            raise ValueError("errored text")

        @define_eval()
        def e_passed(t):
            t.check(1, equals(1)).label("passed label")
    """)
    out = project.run().stdout
    positions = [out.index(text) for text in ("errored text", "failed label", "ratio label", "gate label")]
    assert positions == sorted(positions)
    assert "passed label" not in out


def test_store_flag_writes_and_reads_another_store(project):
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/ok.py", """
        from niceeval_cli import define_eval

        @define_eval()
        def ok(t):
            pass
    """)
    assert project.run("--store", "elsewhere/other.db").exit_code == 0
    assert (project.root / "elsewhere/other.db").exists()
    assert not (project.root / ".niceeval/results.db").exists()
    rows = project.cli("query", "attempts", "--format", "json", "--store", "elsewhere/other.db")
    assert [a["eval_id"] for a in json.loads(rows.stdout)] == ["ok"]


def test_store_setting_in_niceeval_toml_is_relative_to_the_file(project):
    project.write("niceeval.toml", '[project]\nstore = "data/evals.db"\n')
    project.write("evals/ok.py", """
        from niceeval_cli import define_eval

        @define_eval()
        def ok(t):
            pass
    """)
    assert project.run().exit_code == 0
    assert (project.root / "data/evals.db").exists()
    assert [a["eval_id"] for a in project.attempts()] == ["ok"]


def test_niceeval_toml_is_found_by_walking_up_and_config_flag_points_elsewhere(project, monkeypatch):
    from niceeval_cli.cli import app
    from tests.support.cli_runner import CliRunner

    project.write("niceeval.toml", "[experiments.walked]\n")
    project.write("alt.toml", "[experiments.flagged]\n")
    project.write("evals/deep/ok.py", """
        from niceeval_cli import define_eval

        @define_eval()
        def ok(t):
            pass
    """)
    monkeypatch.chdir(project.root / "evals" / "deep")
    walked = CliRunner().invoke(app, ["run"], catch_exceptions=False)
    assert walked.exit_code == 0, walked.output
    flagged = CliRunner().invoke(app, ["run", "--config", str(project.root / "alt.toml")], catch_exceptions=False)
    assert flagged.exit_code == 0, flagged.output
    monkeypatch.chdir(project.root)
    experiments = sorted(a["experiment_id"] for a in project.attempts("--run", "all"))
    assert experiments == ["flagged", "walked"]


CAPPED = """
import itertools
from niceeval_cli import define_eval
from niceeval_cli.expect import equals

_flaky = itertools.count()

def fails(t):
    t.check(1, equals(2)).label("Never equal")

for i in range(23):
    globals()[f"fails_{i:02d}"] = define_eval(test=fails, name=f"fails_{i:02d}")

@define_eval(attempts=3, pass_rule="any")
def flaky(t):
    t.check("yes" if next(_flaky) == 0 else "no", equals("yes")).label("Says yes")
"""


def test_summary_expands_twenty_failing_attempts_and_counts_the_rest_but_not_those_of_an_eval_that_passed(project):
    project.write("niceeval.toml", "[project]\nmax_concurrency = 1\n")
    project.write("evals/capped.py", CAPPED)
    result = project.run()
    assert result.exit_code == 1
    out = result.stdout
    run_id = project.query("runs")[0]["id"]
    assert out.count("Never equal") == 20
    # 23 failing attempts: 20 shown, 3 more; flaky's 2 failed attempts are the detail of an eval
    # that passed under its rule, neither shown nor counted.
    assert f"… and 3 more; see `niceeval view {run_id}`" in out
    assert "Says yes" not in out
    assert "passed under pass_rule any: 1/3 passed · 33% [6%, 79%] · flaky" in out


def test_summary_of_a_run_whose_only_failing_attempts_belong_to_an_eval_that_passed_expands_nothing(project):
    project.write("niceeval.toml", "[project]\nmax_concurrency = 1\n")
    project.write("evals/capped.py", CAPPED.replace("range(23)", "range(0)"))
    result = project.run()
    assert result.exit_code == 0, result.stdout
    assert "Says yes" not in result.stdout and "more; see" not in result.stdout
    assert "passed under pass_rule any: 1/3 passed · 33% [6%, 79%] · flaky" in result.stdout


def test_dry_refuses_the_executor_the_run_would_refuse(project):
    """`run --dry` is where a CI author checks a plan: an unknown executor, from the flag or from
    [run] executor, exits 2 there as in the run, instead of a plan that the run then refuses."""
    project.write("niceeval.toml", '[run]\nexecutor = "inproces"\n')
    project.write("evals/e.py", """
        from niceeval_cli import define_eval

        @define_eval()
        def ok(t):
            pass
    """)
    from_toml = project.run("--dry")
    project.write("niceeval.toml", "[project]\n")
    from_flag = project.run("--dry", "--executor", "bogus")
    assert (from_toml.exit_code, from_flag.exit_code) == (2, 2)
    assert from_toml.stderr.startswith(f"niceeval: {project.root.resolve() / 'niceeval.toml'}: [run] executor: "
                                       "unknown executor 'inproces' (did you mean 'inprocess'?); known: inprocess")
    assert "--executor 'bogus': unknown executor 'bogus'" in from_flag.stderr
    assert project.run("--dry").exit_code == 0


def test_an_empty_eval_selector_is_refused_not_read_as_every_eval(project):
    """`niceeval run "$EVAL"` with the variable unset ran every eval (an empty prefix matches all);
    `--eval ''` of view and query listed everything. Refused like `-e ''`, exit 2, nothing run."""
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/e.py", """
        from niceeval_cli import define_eval

        @define_eval()
        def ok(t):
            pass
    """)
    refused = project.run("")
    assert refused.exit_code == 2
    assert refused.stderr.strip() == (
        "niceeval: run '': an empty eval selector would select every eval; give an eval id prefix or glob, "
        "or leave it out to select them all")
    assert not project.store.exists()
    assert project.run().exit_code == 0
    for command in (("query", "attempts"), ("view",)):
        read = project.cli(*command, "--eval", " ")
        assert read.exit_code == 2, command
        assert read.stderr.startswith("niceeval: --eval '': an empty eval selector would select every eval"), command
