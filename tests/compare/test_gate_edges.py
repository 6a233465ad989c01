"""`compare`'s gate at its edges, through the CLI: evidence that cannot tell must never read as a
change, and what the gate did not weigh is said (statistics.md, "Comparisons"; reports.md)."""

from __future__ import annotations

import json

from tests.support.project import Project

CONSTANT_SCORES = """
from niceeval_cli import define_score_eval


@define_score_eval()
async def a(t):
    await t.send("x")
    t.score(0.1, weight=1)


@define_score_eval()
async def b(t):
    await t.send("x")
    t.score(0.1, weight=1)
"""


def _latest(project: Project) -> str:
    return str(project.sql("SELECT id FROM runs ORDER BY started_at DESC, id DESC LIMIT 1")[0]["id"])


def test_the_same_scores_over_other_attempt_counts_pass_the_significance_gate(project: Project) -> None:
    """Every attempt scores 0.1 in both runs, three attempts a unit before and seven after: the
    mean of three 0.1s is 0.10000000000000002, of seven 0.1. That last bit is no regression — it
    read as a certain one (Δ −0.000 [−0.000, −0.000], p < 0.001) and the gate exited 1."""
    project.write("app.py", "def reply(message):\n    return message\n")
    project.write("evals/s.py", CONSTANT_SCORES)
    project.write("niceeval.toml", '[project]\n[experiments.local]\nadapter = "python"\n'
                  '[experiments.local.options]\ncallable = "app:reply"\n')
    assert project.run("--attempts", "3").returncode == 0
    base = _latest(project)
    assert project.run("--rerun-all", "--attempts", "7").returncode == 0
    new = _latest(project)

    gate = project.cli("compare", base, new, "--fail-on", "significant-regression")
    assert gate.returncode == 0, gate.stdout + gate.stderr
    data = json.loads(project.cli("compare", base, new, "--format", "json").stdout)
    assert [(p["class"], p["p_value"]) for p in data["pairs"]] == [("unchanged", 1.0), ("unchanged", 1.0)]
    (experiment,) = data["experiments"]
    assert (experiment["difference"], experiment["p_value"], experiment["n_units"]) == (0.0, 1.0, 2)
