"""An experiment whose pass-style evals were not decided (every attempt errored) never reads as
a 0 % pass rate: the eval pass rate is over decided evals (statistics.md: undecided ones are
counted beside, "not in the mean", as the run summary says), the report and `compare
--experiments` say how many are undecided, and the report's chart draws no bar for none decided."""

from __future__ import annotations

import json

from tests.support.project import Project

EVAL = """
from niceeval_cli import define_eval
from niceeval_cli.expect import equals


@define_eval()
async def y(t):
    turn = await t.send("q")
    t.check(turn.message, equals("yes")).label("Says yes")
"""


def test_an_experiment_whose_evals_all_errored_shows_them_undecided_beside_its_rate(project: Project) -> None:
    project.write("app.py", "def broken(message):\n    raise RuntimeError('down')\n\n\n"
                  "def reply(message):\n    return 'yes'\n")
    project.write("evals/y.py", EVAL)
    project.write("niceeval.toml", '[experiments.a]\nadapter = "python"\n[experiments.a.options]\n'
                  'callable = "app:broken"\n\n[experiments.b]\nadapter = "python"\n'
                  '[experiments.b.options]\ncallable = "app:reply"\n')
    assert project.run().returncode == 5

    assert project.cli("report", "--out", "r.html").returncode == 0
    page = (project.root / "r.html").read_text()
    assert "— (no decided eval · 1 undecided)" in page and "0% (0/1 evals" not in page
    assert "100% (1/1 evals)" in page
    assert 'class="bar passed"' in page and "a: — (no decided eval" not in page  # b's bar, none for a

    compared = project.cli("compare", "--experiments", "a", "b")
    assert compared.returncode == 0, compared.stderr
    assert "a: 1 attempts · evals: none decided · 1 undecided ·" in compared.stdout, compared.stdout
    assert "(0%)" not in compared.stdout
    rows = json.loads(project.cli("compare", "--experiments", "a", "b", "--format", "json").stdout)
    assert rows["pairs"][0]["class"] == "decided"


MIXED = """
from niceeval_cli import define_eval
from niceeval_cli.expect import equals


@define_eval()
def good(t):
    t.check(1, equals(1))


@define_eval()
def bad(t):
    t.check(1, equals(2))


@define_eval()
def broken(t):
    raise RuntimeError("boom")
"""


def test_the_eval_pass_rate_is_over_decided_evals_as_the_run_summary_says(project: Project) -> None:
    """One passed, one failed, one errored: the run summary says "pass rate 50% … over 2 evals · 1
    eval undecided, not in the mean", and the report's and compare's eval pass rate is that 50 %
    too (it read 33 %, the errored eval counted as not passing)."""
    project.write("evals/mixed.py", MIXED)
    run = project.run()
    assert run.returncode == 1 and "over 2 evals · 1 eval undecided, not in the mean" in run.stdout, run.stdout
    assert project.cli("report", "--out", "r.html").returncode == 0
    page = (project.root / "r.html").read_text()
    assert "50% (1/2 evals · 1 undecided)" in page and "33%" not in page
