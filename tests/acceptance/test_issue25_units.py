"""Issue 25, items 2 and 5, from the outside: `query units` and `query experiments`.

Evals with known pass patterns (the stand-in app passes the first k of n attempts of each
message); every figure is checked against statistics.md's formulas (scipy for Wilson) to four
decimals, the cases of one dataset eval forming one cluster."""

from __future__ import annotations

import json
import math

import pytest
from scipy import stats as sp

from tests.support.pattern_app import write_pattern_project
from tests.support.project import Project


@pytest.fixture
def proj(project: Project) -> Project:
    """The CLI in process (tests/conftest.py `project`): these checks read exit codes, output and
    stored rows; what is about a process (signals, pipes) still starts the real `niceeval`."""
    return project


EVALS = """
from niceeval_cli import Case, define_eval
from niceeval_cli.expect import equals


@define_eval()
async def flaky(t):
    turn = await t.send("flaky")
    t.check(turn.message, equals("yes")).label("Says yes")


@define_eval()
async def steady(t):
    turn = await t.send("steady")
    t.check(turn.message, equals("yes")).label("Says yes")


@define_eval(cases=[Case("a", "ca"), Case("b", "cb")])
async def cases(t, message):
    turn = await t.send(message)
    t.check(turn.message, equals("yes")).label("Says yes")
"""

PASSES = {"PASSES_flaky": "3", "PASSES_steady": "5", "PASSES_ca": "1", "PASSES_cb": "0"}


def _project(proj: Project) -> Project:
    write_pattern_project(proj, EVALS, "attempts = 5\n")
    result = proj.run(env=PASSES)
    assert result.returncode == 1, result.stdout + result.stderr
    return proj


def _rows(proj: Project, *args: str) -> list[dict]:
    out = proj.cli("query", *args, "--format", "json")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_units_carry_wilson_intervals_pass_at_k_and_flakiness(proj: Project) -> None:
    _project(proj)
    units = {u["eval_id"]: u for u in _rows(proj, "units", "--k", "2")}
    assert set(units) == {"pattern/flaky", "pattern/steady", "pattern/cases[a]", "pattern/cases[b]"}
    flaky = units["pattern/flaky"]
    assert (flaky["decided"], flaky["passed"], flaky["errored"], flaky["flaky"]) == (5, 3, 0, True)
    ref = sp.binomtest(3, 5).proportion_ci(confidence_level=0.95, method="wilson")
    assert (round(flaky["low"], 4), round(flaky["high"], 4)) == (round(ref.low, 4), round(ref.high, 4))
    assert flaky["rate"] == 0.6 and flaky["k"] == 2
    assert round(flaky["pass_at_k"], 4) == 0.9 and round(flaky["pass_hat_k"], 4) == 0.3
    steady = units["pattern/steady"]
    assert steady["flaky"] is False and (round(steady["low"], 4), steady["high"]) == (0.5655, 1.0)
    assert units["pattern/cases[a]"]["case_id"] == "a"
    default_k = {u["eval_id"]: u["k"] for u in _rows(proj, "units")}
    assert set(default_k.values()) == {5}
    assert _rows(proj, "units", "--k", "6")[0]["pass_at_k"] is None  # k above the evidence
    table = proj.cli("query", "units", "--k", "6", "--format", "table", env={"COLUMNS": "250"})
    assert table.returncode == 0 and table.stdout.count("— (5 decided < k 6)") == 8, table.stdout  # 4 units × 2


def test_experiments_mean_over_units_with_the_cluster_term(proj: Project) -> None:
    _project(proj)
    (row,) = _rows(proj, "experiments")
    x = {"flaky": 0.6, "steady": 1.0, "ca": 0.2, "cb": 0.0}
    values = list(x.values())
    mean = sum(values) / 4
    dev = {k: v - mean for k, v in x.items()}
    variance = sum(d * d for d in dev.values()) / (4 * 3)
    cross = ((dev["ca"] + dev["cb"]) ** 2 - dev["ca"] ** 2 - dev["cb"] ** 2) / 16
    se = math.sqrt(variance + cross)
    assert row["style"] == "pass" and row["n_units"] == 4 and row["undecided_units"] == 0
    assert round(row["estimate"], 4) == round(mean, 4)
    assert round(row["se"], 4) == round(se, 4)
    assert row["clustered"] is True
    assert round(row["low"], 4) == round(max(0.0, mean - 1.959964 * se), 4)
    narrow = _rows(proj, "experiments", "--confidence", "0.8")[0]
    assert round(narrow["high"], 4) == round(min(1.0, mean + sp.norm.ppf(0.9) * se), 4)


def test_a_flag_that_does_not_apply_is_refused(proj: Project) -> None:
    _project(proj)
    for args in (("attempts", "--k", "2"), ("units", "--state", "failed"), ("attempts", "--confidence", "0.9")):
        out = proj.cli("query", *args)
        assert out.returncode == 2 and "Traceback" not in out.stderr, (args, out.stderr)
