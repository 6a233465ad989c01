"""An experiment whose pass-style evals were not decided (every attempt errored) never reads as
a bare 0 % pass rate: the report and `compare --experiments` say how many evals are undecided
beside it, as `view` does ("0 of 1 passed · 1 errored")."""

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
    assert "0% (0/1 evals · 1 undecided)" in page and "0% (0/1 evals)" not in page
    assert "100% (1/1 evals)" in page

    compared = project.cli("compare", "--experiments", "a", "b")
    assert compared.returncode == 0, compared.stderr
    assert "a: 1 attempts · evals 0/1 passed (0%) · 1 undecided ·" in compared.stdout, compared.stdout
    rows = json.loads(project.cli("compare", "--experiments", "a", "b", "--format", "json").stdout)
    assert rows["pairs"][0]["class"] == "decided"
