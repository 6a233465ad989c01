"""Issue 25, item 3, from the outside: `compare` tells a regression from noise.

Evals with known pass patterns (the stand-in app passes the first k of n attempts of each eval)
run twice; `compare --format json` carries each pair's Fisher p, its BH q and significance, and
each experiment's paired difference, to four decimals of statistics.md's formulas; the
`significant-regression` gate exits 1 / 5 / 0 and `regressed` keeps its meaning."""

from __future__ import annotations

import json
import math

import pytest
from scipy import stats as sp

from tests.support.pattern_app import TWO_EVALS, run_with_passes, write_pattern_project
from tests.support.project import Project


@pytest.fixture
def proj(project: Project) -> Project:
    """The CLI in process (tests/conftest.py `project`): these checks read exit codes, output and
    stored rows; what is about a process (signals, pipes) still starts the real `niceeval`."""
    return project


def _project(proj: Project, attempts: int) -> Project:
    return write_pattern_project(proj, TWO_EVALS, f"attempts = {attempts}\npass_rule = 0.6\n")


def _run(proj: Project, e1: int, e2: int) -> str:
    return run_with_passes(proj, e1=e1, e2=e2)


def test_one_regression_among_two_tests_is_within_noise_and_the_gate_says_so(proj: Project) -> None:
    _project(proj, attempts=5)
    base, new = _run(proj, 5, 3), _run(proj, 1, 3)

    out = proj.cli("compare", base, new, "--format", "json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    pairs = {p["eval_id"]: p for p in data["pairs"]}
    e1, e2 = pairs["pattern/e1"], pairs["pattern/e2"]
    assert e1["class"] == "regressed" and e2["class"] == "unchanged"
    p1 = sp.fisher_exact([[5, 0], [1, 4]]).pvalue
    assert round(e1["p_value"], 4) == round(p1, 4) == 0.0476
    q = sp.false_discovery_control([p1, 1.0], method="bh")
    assert round(e1["q_value"], 4) == round(q[0], 4) == 0.0952
    assert e1["significance"] == "within-noise" and e2["significance"] is None
    assert (round(e1["base_low"], 4), round(e1["base_high"], 4)) == (0.5655, 1.0)  # Wilson 5/5
    (experiment,) = data["experiments"]
    assert experiment["style"] == "pass" and experiment["n_units"] == 2
    assert round(experiment["difference"], 4) == -0.4 and round(experiment["se"], 4) == 0.4
    assert round(experiment["p_value"], 4) == round(2 * (1 - sp.norm.cdf(1.0)), 4) == 0.3173
    assert (round(experiment["low"], 4), round(experiment["high"], 4)) == (-1.0, round(-0.4 + 1.959964 * 0.4, 4))

    gate = proj.cli("compare", base, new, "--fail-on", "significant-regression")
    assert gate.returncode == 5, gate.stdout + gate.stderr
    assert "could not tell: 1 regression within noise" in gate.stderr
    assert "within noise (q = 0.095)" in gate.stdout
    assert "pass rate 80.0% → 40.0%, Δ −40.0 points" in gate.stdout and "paired over 2 evals" in gate.stdout
    assert proj.cli("compare", base, new, "--fail-on", "regressed").returncode == 1


def test_a_regression_with_enough_attempts_is_significant_and_fails_the_gate(proj: Project) -> None:
    _project(proj, attempts=10)
    base, new = _run(proj, 10, 6), _run(proj, 0, 6)
    data = json.loads(proj.cli("compare", base, new, "--format", "json").stdout)
    e1 = next(p for p in data["pairs"] if p["eval_id"] == "pattern/e1")
    assert e1["significance"] == "significant" and e1["q_value"] < 0.05
    gate = proj.cli("compare", base, new, "--fail-on", "significant-regression")
    assert gate.returncode == 1, gate.stdout + gate.stderr


def test_nothing_regressed_passes_the_gate_and_ndjson_carries_both_row_kinds(proj: Project) -> None:
    _project(proj, attempts=5)
    base, new = _run(proj, 5, 3), _run(proj, 5, 3)
    assert proj.cli("compare", base, new, "--fail-on", "significant-regression").returncode == 0
    nd = proj.cli("compare", base, new, "--format", "ndjson")
    kinds = [json.loads(line)["row"] for line in nd.stdout.splitlines()]
    assert kinds == ["pair", "pair", "experiment"]
    experiment = json.loads(nd.stdout.splitlines()[-1])
    assert experiment["difference"] == 0 and experiment["p_value"] == 1


def test_alpha_and_confidence_flags_and_the_stats_table(proj: Project) -> None:
    _project(proj, attempts=5)
    base, new = _run(proj, 5, 3), _run(proj, 1, 3)
    loose = json.loads(proj.cli("compare", base, new, "--format", "json", "--alpha", "0.1").stdout)
    assert next(p for p in loose["pairs"] if p["eval_id"] == "pattern/e1")["significance"] == "significant"
    proj.write("niceeval.toml", (proj.root / "niceeval.toml").read_text() + "\n[stats]\nconfidence = 0.9\n")
    narrow = json.loads(proj.cli("compare", base, new, "--format", "json").stdout)
    e1 = next(p for p in narrow["pairs"] if p["eval_id"] == "pattern/e1")
    ref = sp.binomtest(5, 5).proportion_ci(confidence_level=0.9, method="wilson")
    assert math.isclose(e1["base_low"], ref.low, abs_tol=1e-9)
    bad = proj.cli("compare", base, new, "--alpha", "2")
    assert bad.returncode == 2 and "--alpha" in bad.stderr
