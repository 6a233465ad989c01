"""`niceeval view` through the real CLI: a failing run, then finding out why."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

FAILING = """
from niceeval_cli import Fact, define_eval, define_score_eval
from niceeval_cli.expect import equals, includes, similarity


@define_eval()
def refund(t):
    reply = "We ship in 3 days.\\x1b[2J"
    t.check(reply, includes("30 days")).label("Mentions 30 days")
    t.check(reply, similarity("Refunds within 30 days.").at_least(0.8)).gate().label("Close to reference")
    t.check(1, equals(1)).label("fine")


@define_eval()
def greeting(t):
    t.check("hello", equals("hello")).label("Says hello")


@define_score_eval()
def review(t):
    t.check(1, equals(1)).score(5).label("Participation")
    t.score(Fact.unavailable("completion-unobserved"), weight=50).label("Completion")
"""



@pytest.fixture
def failed_run(project):
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/support.py", FAILING)
    assert project.run().exit_code == 1
    return project


def test_view_explains_a_failing_run_worst_first(failed_run) -> None:
    result = failed_run.cli("view")
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    assert out.index("FAILED  default · support/refund#0") < out.index("UNRANKABLE  default · support/review#0")
    assert "✗ mismatched   Mentions 30 days" in out
    assert "Close to reference  0." in out and "< 0.80 required  [gate]" in out
    assert "? unavailable  Completion  — / 50" in out and "reason: completion-unobserved" in out
    assert "5 of 55 · 50 unavailable · not rankable" in out
    assert "passed  default · support/greeting#0" in out
    assert "\x1b" not in out and "\\x1b[2J" in out


def test_view_at_attempt_shows_one_attempt_in_full(failed_run) -> None:
    attempt = next(a for a in failed_run.attempts() if a["eval_id"] == "support/refund")
    result = failed_run.cli("view", "@" + attempt["id"].lower())  # any case
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith(f"Attempt {attempt['id']}  FAILED")
    assert "evidence" in result.stdout and "source       evals/support.py:9" in result.stdout


def test_the_run_summary_prints_failures_with_the_same_renderer_as_view(failed_run) -> None:
    summary = failed_run.run("--rerun-all").stdout
    view = failed_run.cli("view").stdout
    block = view.split("Attempts, worst first\n", 1)[1].split("\n\n", 1)[0]
    assert block.startswith("FAILED  default · support/refund#0")
    summary_block = summary.split("\n\n")[1]
    # The summary shows only the entries that went wrong; view adds the passing ones below them.
    assert summary_block.splitlines() == [line for line in block.splitlines() if "✓" not in line]


@pytest.mark.parametrize("ref", ["NOSUCHRUN", "@NOSUCHATTEMPT"])
def test_unknown_ids_exit_2_with_one_paragraph(failed_run, ref) -> None:
    result = failed_run.cli("view", ref)
    assert result.exit_code == 2
    assert "NOSUCH" in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_an_ambiguous_prefix_exits_2(failed_run) -> None:
    result = failed_run.cli("view", "@0")
    assert result.exit_code == 2
    assert "ambiguous" in result.stderr


def test_an_unknown_state_filter_exits_2(failed_run) -> None:
    result = failed_run.cli("view", "--state", "sad")
    assert result.exit_code == 2
    assert "'sad'" in result.stderr


def test_view_with_no_store_yet_exits_2(project) -> None:
    project.write("niceeval.toml", "[project]\n")
    result = project.cli("view")
    assert result.exit_code == 2
    assert "run `niceeval run` first" in result.stderr


def test_view_in_a_subprocess_is_plain_and_stable(failed_run) -> None:
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "40"}
    runs = [
        subprocess.run([sys.executable, "-m", "niceeval_cli.cli", "view"], cwd=failed_run.root, env=env,
                       capture_output=True, text=True, timeout=60)
        for _ in range(2)
    ]
    assert [r.returncode for r in runs] == [0, 0]
    assert runs[0].stdout == runs[1].stdout
    assert "\x1b" not in runs[0].stdout
    long_line = next(line for line in runs[0].stdout.splitlines() if "Mentions 30 days" in line)
    assert len(long_line) > 20  # piped output is not wrapped at COLUMNS
    assert any(len(line) > 40 for line in runs[0].stdout.splitlines())
