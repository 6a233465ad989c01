"""`compare`'s gate at its edges, through the CLI: evidence that cannot tell must never read as a
change, and what the gate did not weigh is said (statistics.md, "Comparisons"; reports.md)."""

from __future__ import annotations

import json

from tests.support.pattern_app import TWO_EVALS, run_with_passes, write_pattern_project
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


def test_a_gate_that_passes_over_evals_new_could_not_decide_says_so(project: Project) -> None:
    """Every eval of NEW errored (the app has no PASSES_ variables: each attempt raises): nothing
    regressed, so the gates exit 0 as reports.md / statistics.md say — and now say on stderr that
    they passed without weighing the two undecided pairs, and which flag would."""
    write_pattern_project(project, TWO_EVALS, "attempts = 2\n")
    base = run_with_passes(project, e1=2, e2=2)
    assert project.run("--rerun-all").returncode == 5
    new = _latest(project)

    for gate in (["--fail-on", "significant-regression"], ["--fail-on", "regressed"]):
        passed = project.cli("compare", base, new, *gate)
        assert passed.returncode == 0, passed.stdout + passed.stderr
        assert ("gate passed without weighing 2 pairs undecided now: NEW holds no verdict for them" in passed.stderr
                and "add --fail-on undecided" in passed.stderr), passed.stderr
    strict = project.cli("compare", base, new, "--fail-on", "regressed", "--fail-on", "undecided")
    assert strict.returncode == 1 and "without weighing" not in strict.stderr
    assert "without weighing" not in project.cli("compare", base, new).stderr  # no gate asked: nothing to say
    same = project.cli("compare", base, base, "--fail-on", "significant-regression")
    assert same.returncode == 0 and same.stderr == ""


def test_a_certain_drop_reads_q_below_a_thousandth(project: Project) -> None:
    """Three attempts scoring 0.5, then three scoring 0.4, no spread: Welch's p is 0 (statistics.md),
    the gate exits 1 and the terminal reads `q < 0.001` (it read `q = < 0.001`)."""
    project.write("app.py", "def reply(message):\n    return message\n")
    project.write("evals/s.py", "import os\nfrom niceeval_cli import define_score_eval\n\n\n"
                  "@define_score_eval()\nasync def s(t):\n    await t.send('x')\n"
                  "    t.score(float(os.environ['SV']), weight=1)\n")
    project.write("niceeval.toml", '[project]\nattempts = 3\n[experiments.local]\nadapter = "python"\n'
                  '[experiments.local.options]\ncallable = "app:reply"\n')
    assert project.run(env={"SV": "0.5"}).returncode == 0
    base = _latest(project)
    assert project.run("--rerun-all", env={"SV": "0.4"}).returncode == 0
    gate = project.cli("compare", base, _latest(project), "--fail-on", "significant-regression")
    assert gate.returncode == 1, gate.stdout + gate.stderr
    assert "significant (q < 0.001)" in gate.stdout and "= <" not in gate.stdout, gate.stdout


def test_a_failing_gate_says_why_on_stderr(project: Project) -> None:
    """Both evals pass under "any" on both sides (5/5, then 2/5): no pair regressed, yet the paired
    line's interval lies wholly below 0 and the significant-regression gate exits 1 (statistics.md).
    It did so in silence under "Nothing regressed"; stderr now names the cause. A class gate names
    the classes that tripped it."""
    write_pattern_project(project, TWO_EVALS, 'attempts = 5\npass_rule = "any"\n')
    base, new = run_with_passes(project, e1=5, e2=5), run_with_passes(project, e1=2, e2=2)
    gate = project.cli("compare", base, new, "--fail-on", "significant-regression")
    assert gate.returncode == 1, gate.stdout + gate.stderr
    assert ("gate failed: local's paired pass-style difference lies wholly below 0 (--fail-on "
            "significant-regression)") in gate.stderr, gate.stderr
    worse = run_with_passes(project, e1=0, e2=2)
    by_class = project.cli("compare", base, worse, "--fail-on", "regressed,undecided")
    assert by_class.returncode == 1 and "gate failed: 1 regressed (--fail-on regressed,undecided)" in by_class.stderr


def test_a_score_gate_that_failed_every_attempt_is_tested_on_the_gate(project: Project) -> None:
    """Five attempts a run, the same score every time; the gate passes in all five, then fails in
    all five. The pair regressed on its gate, so it is tested on the gate's counts (Fisher, 5/5 → 0/5:
    p = 0.0079) and the significant-regression gate exits 1. Tested on the scores, which never moved,
    it read `within noise (q = 1.000)` and the gate said "could not tell" (exit 5)."""
    project.write("app.py", "def reply(message):\n    return message\n")
    project.write("evals/s.py", "import os\nfrom niceeval_cli import define_score_eval\n"
                  "from niceeval_cli.expect import equals\n\n\n@define_score_eval()\n"
                  "async def s(t):\n    await t.send('x')\n"
                  "    t.check(os.environ['GATE'], equals('ok')).gate().label('Gate')\n"
                  "    t.score(0.6, weight=10)\n")
    project.write("niceeval.toml", '[project]\nattempts = 5\n[experiments.local]\nadapter = "python"\n'
                  '[experiments.local.options]\ncallable = "app:reply"\n')
    assert project.run(env={"GATE": "ok"}).returncode == 0
    base = _latest(project)
    assert project.run("--rerun-all", env={"GATE": "no"}).returncode == 1
    new = _latest(project)
    gate = project.cli("compare", base, new, "--fail-on", "significant-regression")
    assert gate.returncode == 1, gate.stdout + gate.stderr
    (pair,) = json.loads(project.cli("compare", base, new, "--format", "json").stdout)["pairs"]
    assert (pair["class"], pair["significance"], round(pair["p_value"], 4)) == ("regressed", "significant", 0.0079)
