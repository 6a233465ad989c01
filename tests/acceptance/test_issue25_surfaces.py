"""Issue 25, items 1 and 5, from the outside: the statistics of the run summary and `view`.

A stand-in app passes the first k of each message's attempts, fails the next f and then raises
(an errored attempt). Every printed figure is checked against statistics.md's formulas, computed
here independently (scipy for Wilson and t), to the precision shown (whole percents)."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from statistics import NormalDist

import pytest
from scipy import stats as sp

from tests.support.project import Project, base_env


@pytest.fixture
def proj(project: Project) -> Project:
    """The CLI in process (tests/conftest.py `project`): these checks read exit codes, output and
    stored rows; what is about a process (signals, pipes) still starts the real `niceeval`."""
    return project


APP = """
import os
import threading
from collections import Counter

_seen = Counter()
_lock = threading.Lock()


def reply(message: str) -> str:
    with _lock:
        n = _seen[message]
        _seen[message] += 1
    passes = int(os.environ.get("PASSES_" + message, "5"))
    fails = int(os.environ.get("FAILS_" + message, "5"))
    if n < passes:
        return "yes"
    if n < passes + fails:
        return "no"
    raise RuntimeError("the stand-in app is down")
"""

EVALS = """
from niceeval_cli import Case, define_eval
from niceeval_cli.expect import equals


async def ask(t, message):
    turn = await t.send(message)
    t.check(turn.message, equals("yes")).label("Says yes")


@define_eval()
async def flaky(t):
    await ask(t, "flaky")


@define_eval()
async def steady(t):
    await ask(t, "steady")


@define_eval()
async def shaky(t):
    await ask(t, "shaky")


@define_eval(cases=[Case("a", "ca"), Case("b", "cb")])
async def cases(t, message):
    await ask(t, message)
"""

SCORES = """
from niceeval_cli import define_score_eval
from niceeval_cli.expect import equals


@define_score_eval()
async def sc1(t):
    turn = await t.send("sc1")
    t.check(turn.message, equals("yes")).score(1).label("Says yes")
    t.check("x", equals("x")).score(1).label("Tried")


@define_score_eval()
async def sc2(t):
    turn = await t.send("sc2")
    t.check(turn.message, equals("yes")).score(1).label("Says yes")
    t.check("x", equals("x")).score(1).label("Tried")
"""

#: flaky 3 of 5; steady 5 of 5; shaky 2 passed, 1 failed, 2 errored; cases a 1 of 5, b 0 of 5.
PASSES = {"PASSES_flaky": "3", "PASSES_shaky": "2", "FAILS_shaky": "1", "PASSES_ca": "1", "PASSES_cb": "0"}
#: (passed, decided, errored) per unit, and each unit's cluster (its eval).
UNITS = {"flaky": (3, 5, 0), "steady": (5, 5, 0), "shaky": (2, 3, 2), "cases[a]": (1, 5, 0), "cases[b]": (0, 5, 0)}
CLUSTER = {"flaky": "flaky", "steady": "steady", "shaky": "shaky", "cases[a]": "cases", "cases[b]": "cases"}
TOML = ('[project]\nattempts = 5\npass_rule = 0.6\n\n[experiments.local]\nadapter = "python"\n'
        '[experiments.local.options]\ncallable = "app:reply"\n')


def pct(x: float) -> str:
    return f"{x * 100:.0f}%"


def wilson(s: int, n: int, c: float = 0.95) -> tuple[float, float]:
    ci = sp.binomtest(s, n).proportion_ci(confidence_level=c, method="wilson")
    return ci.low, ci.high


def clustered(values: dict[str, float], clusters: dict[str, str], c: float = 0.95) -> tuple[float, float, float]:
    """statistics.md, "Per experiment": x̄ and x̄ ± z·SE with the cluster term, clipped to [0, 1]."""
    n = len(values)
    mean = sum(values.values()) / n
    dev = {k: v - mean for k, v in values.items()}
    variance = sum(d * d for d in dev.values()) / (n * (n - 1))
    cross = 0.0
    for cluster in set(clusters.values()):
        members = [dev[k] for k in values if clusters[k] == cluster]
        cross += sum(a * b for i, a in enumerate(members) for j, b in enumerate(members) if i != j)
    se = math.sqrt(variance + cross / (n * n))
    z = NormalDist().inv_cdf(1 - (1 - c) / 2)
    return mean, max(0.0, mean - z * se), min(1.0, mean + z * se)


def _project(proj: Project, toml: str = TOML) -> Project:
    proj.write("app.py", APP)
    proj.write("evals/pattern.py", EVALS)
    proj.write("niceeval.toml", toml)
    return proj


def _expected_lines(c: float = 0.95) -> tuple[str, dict[str, str]]:
    rates = {k: s / n for k, (s, n, _) in UNITS.items()}
    mean, low, high = clustered(rates, CLUSTER, c)
    flaky = sum(1 for s, n, _ in UNITS.values() if 0 < s < n)
    experiment = f"pass rate {pct(mean)} [{pct(low)}, {pct(high)}] over 5 evals · {flaky} flaky"
    units = {}
    for key, (s, n, errored) in UNITS.items():
        lo, hi = wilson(s, n, c)
        text = f"{s}/{n} passed · {pct(s / n)} [{pct(lo)}, {pct(hi)}]"
        if 0 < s < n:
            text += " · flaky"
        if lo < 0.6 <= hi:
            text += " · within noise"
        if errored:
            text += f" · {errored} errored, not counted"
        units[key] = text
    return experiment, units


def _unit_line(out: str, key: str) -> str:
    (found,) = [ln for ln in out.splitlines() if re.search(rf"pattern/{re.escape(key)}\s", ln) and "pass_rule" in ln]
    return found.split(": ", 1)[1].strip()


def _check(out: str, c: float = 0.95) -> None:
    experiment, units = _expected_lines(c)
    assert experiment in out, out
    # the attempt-level pass rate: s / n over decided attempts, errored beside (never a failure)
    passed = sum(s for s, _, _ in UNITS.values())
    decided = sum(n for _, n, _ in UNITS.values())
    assert f"attempts  {passed} of {decided} passed ({pct(passed / decided)}) · 2 errored, not counted" in out, out
    for key in ("flaky", "shaky", "cases[a]", "cases[b]"):  # steady passed every attempt: counted, not listed
        assert _unit_line(out, key) == units[key], (key, out)


def test_run_summary_and_view_give_each_rate_its_interval(proj: Project) -> None:
    _project(proj)
    run = proj.run(env=PASSES)
    assert run.returncode == 1, run.stdout + run.stderr
    _check(run.stdout)
    # the spec's own example: 3 of 5 → 60% [23%, 88%], and 0 of 5 is not within noise of 0.6
    assert _unit_line(run.stdout, "flaky") == "3/5 passed · 60% [23%, 88%] · flaky · within noise"
    assert "within noise" not in _unit_line(run.stdout, "cases[b]")
    assert "2 errored, not counted" in _unit_line(run.stdout, "shaky")
    view = proj.cli("view")
    assert view.returncode == 0, view.stderr
    _check(view.stdout)
    narrow = proj.cli("view", "--confidence", "0.8")
    _check(narrow.stdout, 0.8)
    assert _expected_lines(0.8)[0] != _expected_lines()[0]  # the flag changes what is printed
    bad = proj.cli("view", "--confidence", "95")
    assert bad.returncode == 2 and "--confidence" in bad.stderr and "Traceback" not in bad.stderr


def test_the_projects_stats_confidence_sets_the_summarys_intervals(proj: Project) -> None:
    _project(proj, TOML + "\n[stats]\nconfidence = 0.9\n")
    run = proj.run(env=PASSES)
    assert run.returncode == 1, run.stderr
    _check(run.stdout, 0.9)
    _check(proj.cli("view").stdout, 0.9)


def test_the_report_reads_the_projects_stats_as_view_and_compare_do(proj: Project) -> None:
    """`[stats] confidence = 0.9`: the HTML report printed 95 % intervals beside `view`'s 90 % ones,
    and tested its `--baseline` comparison at α 0.05 whatever `[stats] alpha` said."""
    import html as html_text

    _project(proj, TOML + "\n[stats]\nconfidence = 0.9\nalpha = 0.2\n")
    assert proj.run(env=PASSES).returncode == 1
    base = proj.sql("SELECT id FROM runs ORDER BY started_at DESC, id DESC LIMIT 1")[0]["id"]
    assert proj.run("--rerun-all", env={**PASSES, "PASSES_steady": "2"}).returncode == 1
    assert proj.cli("report", "--baseline", base, "--out", "r.html").returncode == 0
    page = html_text.unescape(re.sub(r"<[^>]+>", " ", (proj.root / "r.html").read_text()))
    rates = {k: s / n for k, (s, n, _) in UNITS.items()} | {"steady": 2 / 5}
    mean, low, high = clustered(rates, CLUSTER, 0.9)
    assert f"pass rate {pct(mean)} [{pct(low)}, {pct(high)}] over 5 evals" in page
    lo, hi = wilson(3, 5, 0.9)
    assert f"3/5 · 60% [{pct(lo)}, {pct(hi)}]" in page  # the matrix cell of pattern/flaky
    # steady: 5/5 → 2/5 regressed, Fisher p = 0.1667; one of five tested pairs changed: q = 0.8333 ≥ 0.2
    compared = json.loads(proj.cli("compare", base, "--format", "json").stdout)
    (steady,) = [p for p in compared["pairs"] if p["eval_id"] == "pattern/steady"]
    assert steady["significance"] == "within-noise"
    assert f"within noise (q = {steady['q_value']:.3f})" in " ".join(page.split())
    lo, hi = wilson(2, 5, 0.9)
    assert f"2/5 · 40% [{pct(lo)}, {pct(hi)}]" in page


def test_score_units_carry_a_t_interval_and_the_experiment_a_score_line(proj: Project) -> None:
    _project(proj)
    proj.write("evals/scores.py", SCORES)
    # sc1: scores 2, 2, 2, 1 of 2, then an error; sc2: 2 of 2 every time
    run = proj.run("scores", env={"PASSES_sc1": "3", "FAILS_sc1": "1"})
    assert run.returncode == 5, run.stdout + run.stderr
    xs = [1.0, 1.0, 1.0, 0.5]
    mean = sum(xs) / 4
    low, high = sp.t.interval(0.95, 3, loc=mean, scale=sp.sem(xs))
    row = [ln for ln in run.stdout.splitlines() if "scores/sc1" in ln and "mean score" in ln]
    assert row and f"mean score {pct(mean)} of max [{pct(max(0, low))}, {pct(min(1, high))}] over 4 decided attempts" \
        in row[0], run.stdout
    assert "1 errored, not counted" in row[0], row[0]  # beside the estimate, never left unsaid
    e_mean, e_low, e_high = clustered({"sc1": mean, "sc2": 1.0}, {"sc1": "sc1", "sc2": "sc2"})
    assert f"mean score {pct(e_mean)} [{pct(e_low)}, {pct(e_high)}] over 2 evals" in run.stdout, run.stdout


def test_a_plain_run_imports_no_scipy(proj: Project) -> None:
    """statistics.md: `z` comes from the standard library; a plain run never loads scipy, even
    with several attempts per eval and every interval of its summary printed."""
    _project(proj)
    code = "import sys; from niceeval_cli.cli import main; sys.argv = ['niceeval', 'run']; main()"
    out = subprocess.run([sys.executable, "-X", "importtime", "-c", code], cwd=proj.root,
                         env=base_env(PASSES), capture_output=True, text=True, timeout=120)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "pass rate" in out.stdout and "[23%, 88%]" in out.stdout
    imported = [ln.rsplit("|", 1)[-1].strip() for ln in out.stderr.splitlines() if ln.startswith("import time:")]
    assert "niceeval_cli.stats" in imported  # the measure sees the statistics being loaded
    assert not [m for m in imported if m == "scipy" or m.startswith("scipy.")], "a plain run imported scipy"
