"""Issue 22, item 5 (what a new user hit on the command line), reproduced from the outside: the
real `niceeval` in a subprocess, its JUnit read by a real JUnit parser (junitparser) and by
xml.etree, its `--help` and `list` output as a user reads them."""

from __future__ import annotations

import re
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from outside import Proj

junitparser = pytest.importorskip("junitparser", reason="the [test] extra installs junitparser")
from junitparser import xunit2  # noqa: E402

EVALS = """
import os
import time
from pathlib import Path

from niceeval_cli import Fact, define_eval, define_score_eval
from niceeval_cli.expect import equals, includes


def ticket() -> int:
    '''0, 1, 2, ... in the order attempts ask (atomic: O_EXCL), whatever runs them.'''
    folder = Path(os.environ["TICKETS"])
    n = 0
    while True:
        try:
            os.close(os.open(folder / f"t{n}", os.O_CREAT | os.O_EXCL))
            return n
        except FileExistsError:
            n += 1


@define_eval()
def slow(t):
    time.sleep(0.6)
    t.check(1, equals(1)).label("fine")


@define_eval()
def wrong(t):
    t.check("14 days", equals("30 days")).label("Mentions 30 days")


@define_eval()
def crash(t):
    raise ValueError("boom")


@define_eval(attempts=3, pass_rule="any")
def flaky(t):
    n = ticket()
    if n == 1:
        raise RuntimeError("network hiccup")
    t.check("yes" if n >= 2 else "no", equals("yes")).label("Says yes")


@define_score_eval()
def rude(t):
    t.check("you fool", includes("please")).gate().label("No insults")
    t.check("help", includes("help")).score(3).label("Offers help")


@define_score_eval()
def partial(t):
    t.check(Fact.unavailable("completion-unobserved"), equals(True)).score(5).label("Done")
    t.check("x", equals("x")).score(1).label("Tried")


@define_eval(cases={"paris": "France", "rome": "Spain"})
def capital(t, country):
    t.check(country, equals("France")).label("In France")
"""


@pytest.fixture
def proj(tmp_path: Path) -> Proj:
    p = Proj(tmp_path / "proj")
    p.write("niceeval.toml", "[project]\nmax_concurrency = 4\n")
    p.write("evals/a.py", EVALS)
    (tmp_path / "tickets").mkdir()
    return p


def _env(proj: Proj) -> dict[str, str | None]:
    return {"TICKETS": str(proj.root.parent / "tickets")}


def _cases(path: Path) -> dict[str, xunit2.TestCase]:
    xml = xunit2.JUnitXml.fromfile(str(path))
    return {f"{c.classname}::{c.name}": c for suite in xml for c in suite}


def _timed_run(proj: Proj, junit: str) -> tuple[float, str]:
    start = time.monotonic()
    res = proj.run("--junit", junit, env=_env(proj))
    took = time.monotonic() - start
    assert res.returncode == 1, res.stderr
    run_id = re.search(r"niceeval view (\w{26})", res.stdout)
    assert run_id, res.stdout
    return took, run_id.group(1)


@pytest.mark.slow
def test_junit_is_one_testcase_per_eval_with_its_folded_verdict(proj: Proj) -> None:
    _timed_run(proj, "first.xml")
    got = _cases(proj.root / "first.xml")
    assert set(got) == {f"default::a/{n}" for n in
                        ("slow", "wrong", "crash", "flaky", "rude", "partial", "capital[paris]", "capital[rome]")}
    kinds = {key: [type(r).__name__ for r in case.result] for key, case in got.items()}
    assert kinds == {
        "default::a/slow": [], "default::a/flaky": [], "default::a/capital[paris]": [],
        "default::a/wrong": ["Failure"], "default::a/rude": ["Failure"], "default::a/capital[rome]": ["Failure"],
        "default::a/crash": ["Error"], "default::a/partial": ["Error"],
    }
    # <failure>: the failing labels; <error>: the reasons.
    assert got["default::a/wrong"].result[0].message == "Mentions 30 days"
    assert got["default::a/rude"].result[0].message == "No insults"
    assert got["default::a/rude"].result[0].type == "gate failed"
    assert got["default::a/capital[rome]"].result[0].message == "In France"
    assert "ValueError: boom" in got["default::a/crash"].result[0].message
    assert "completion-unobserved" in got["default::a/partial"].result[0].message
    # The flaky eval passed under pass_rule any: one flakyFailure per failed attempt (and the
    # errored one as flakyError), Maven Surefire's schema, which junitparser reads.
    flaky = got["default::a/flaky"]
    assert flaky.is_passed and flaky.is_flaky
    [flaky_failure] = flaky.flaky_failures()
    assert flaky_failure.message == "Says yes" and "FAILED" in (flaky_failure.stack_trace or "")
    [flaky_error] = flaky.flaky_errors()
    assert "network hiccup" in (flaky_error.message or "")
    # Counted as CI counts them: 3 failures, 2 errors, 8 tests.
    root = ET.parse(proj.root / "first.xml").getroot()
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("8", "3", "2")
    assert got["default::a/slow"].time >= 0.6


@pytest.mark.slow
def test_junit_time_is_what_this_run_spent_and_reused_attempts_add_nothing(proj: Proj) -> None:
    _, first = _timed_run(proj, "first.xml")
    took, second = _timed_run(proj, "second.xml")  # reuses what the first sealed (errored runs again)
    got = _cases(proj.root / "second.xml")
    slow = got["default::a/slow"]
    assert slow.time == 0.0, "a reused attempt adds 0 s to this run's JUnit"
    assert f"reused from run {first}" in (slow.system_out or "")
    assert got["default::a/wrong"].time == 0.0
    root = ET.parse(proj.root / "second.xml").getroot()
    total = float(root.get("time") or "nan")
    assert total <= took, f"JUnit says the run took {total} s; it took {took:.2f} s"
    assert sum(float(s.get("time") or 0) for s in root.iter("testsuite")) < 0.6
    # The re-executed errored attempt (flaky #1) is this run's; its reused siblings are named.
    flaky_out = got["default::a/flaky"].system_out or ""
    assert flaky_out.count(f"reused from run {first}") == 2 and second != first
