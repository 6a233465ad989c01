"""`run --junit PATH` (cli.md, "JUnit"): parsed back with xml.etree, as a CI system reads it."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from niceeval_cli._states import AttemptState, GateState, Role
from niceeval_cli.app.run import read_sealed
from niceeval_cli.reports import junit
from niceeval_cli.store import Store
from tests.support.view_builders import Runs, result


@pytest.fixture
def runs(tmp_path: Path):
    store = Store.open(tmp_path / "results.db")
    try:
        yield Runs(tmp_path / "results.db", store)
    finally:
        store.close()


def mixed_run(runs: Runs) -> str:
    run = runs.begin(["a", "b"])
    ok = runs.attempt(run, "e/ok", experiment="a", duration_ms=1500.0)
    runs.seal(ok, result(ok, 0, "matched", "fine"))
    for ordinal, state in enumerate([AttemptState.FAILED, AttemptState.PASSED]):
        flaky = runs.attempt(run, "e/flaky", state, experiment="a", ordinal=ordinal)
        runs.seal(flaky, result(flaky, 0, "mismatched" if state is AttemptState.FAILED else "matched",
                                "Mentions 30 days"), result(flaky, 1, "mismatched", "Polite"))
    crashed = runs.attempt(run, "e/crash", AttemptState.ERRORED, experiment="a", reason="exception",
                           error="ValueError: boom \x1b[2J")
    runs.seal(crashed)
    unrankable = runs.attempt(run, "s/partial", AttemptState.UNRANKABLE, experiment="b", score=5.0,
                              max_score=55.0, unavailable_weight=50.0, reason="completion-unobserved")
    runs.seal(unrankable, result(unrankable, 0, "unavailable", "Done", role=Role.SCORE, weight=50.0,
                                 reason="completion-unobserved"))
    gate_failed = runs.attempt(run, "s/rude", AttemptState.SCORED, experiment="b", score=7.0, max_score=10.0,
                               unavailable_weight=0.0, gate=GateState.FAILED)
    runs.seal(gate_failed, result(gate_failed, 0, "mismatched", "No insults", role=Role.GATE),
              result(gate_failed, 1, "mismatched", "Offered help", role=Role.SCORE, weight=3.0, contribution=0.0))
    gate_unknown = runs.attempt(run, "s/unsure", AttemptState.SCORED, experiment="b", score=10.0,
                                max_score=10.0, unavailable_weight=0.0, gate=GateState.UNAVAILABLE)
    runs.seal(gate_unknown, result(gate_unknown, 0, "unavailable", "Judge gate", role=Role.GATE,
                                   reason="judge-timeout"))
    scored = runs.attempt(run, "s/good", AttemptState.SCORED, experiment="b", score=9.0, max_score=10.0,
                          unavailable_weight=0.0, gate=GateState.PASSED)
    runs.seal(scored)
    runs.finish(run)
    return run


def write_junit(store: Store, run_id: str, path: Path) -> Path:
    """`run --junit`'s two layers: app.run reads the sealed rows, reports.junit writes them."""
    return junit.write_junit(read_sealed(store, run_id, summary_limit=None, junit=True), path)


def cases(root: ET.Element) -> dict[str, ET.Element]:
    return {f"{c.get('classname')}::{c.get('name')}": c for c in root.iter("testcase")}


def test_one_testcase_per_eval_named_by_experiment_and_eval(runs: Runs, tmp_path: Path) -> None:
    run = mixed_run(runs)
    path = write_junit(runs.store, run, tmp_path / "out" / "junit.xml")
    root = ET.parse(path).getroot()
    assert set(cases(root)) == {
        "a::e/ok", "a::e/flaky", "a::e/crash", "b::s/partial", "b::s/rude", "b::s/unsure", "b::s/good",
    }
    assert cases(root)["a::e/ok"].get("time") == "1.500"
    assert [s.get("name") for s in root.iter("testsuite")] == ["a", "b"]
    # e/flaky passed under pass_rule any (1 of 2 attempts): CI counts what the exit code counts.
    assert root.get("tests") == "7" and root.get("failures") == "1" and root.get("errors") == "3"


def test_an_eval_with_several_attempts_passes_under_its_rule_and_lists_its_attempts(
    runs: Runs, tmp_path: Path
) -> None:
    got = cases(ET.parse(write_junit(runs.store, mixed_run(runs), tmp_path / "j.xml")).getroot())
    flaky = got["a::e/flaky"]
    assert flaky.find("failure") is None and flaky.find("error") is None
    out = flaky.findtext("system-out") or ""
    assert out.splitlines()[0] == "passed under pass_rule any: 1 of 2 attempts passed"
    assert "failed #0" in out and "passed #1" in out


def test_failures_name_the_failing_labels_and_errors_the_reasons(runs: Runs, tmp_path: Path) -> None:
    run = mixed_run(runs)
    got = cases(ET.parse(write_junit(runs.store, run, tmp_path / "j.xml")).getroot())
    gate = got["b::s/rude"].find("failure")
    assert gate is not None and gate.get("message") == "No insults" and gate.get("type") == "gate failed"
    crash = got["a::e/crash"].find("error")
    assert crash is not None and crash.get("message") == "exception: ValueError: boom \\x1b[2J"
    partial = got["b::s/partial"].find("error")
    assert partial is not None and "Done: unavailable (completion-unobserved)" in (partial.get("message") or "")
    unsure = got["b::s/unsure"].find("error")
    assert unsure is not None and "judge-timeout" in (unsure.get("message") or "")
    for clean in ("a::e/ok", "b::s/good"):
        assert got[clean].find("failure") is None and got[clean].find("error") is None
    assert "score: 9 of 10" in (got["b::s/good"].findtext("system-out") or "")


def test_the_failure_body_is_the_view_text_of_the_attempt(runs: Runs, tmp_path: Path) -> None:
    run = mixed_run(runs)
    got = cases(ET.parse(write_junit(runs.store, run, tmp_path / "j.xml")).getroot())
    body = got["b::s/rude"].findtext("failure") or ""
    assert body.startswith("GATE FAILED  b · s/rude#0")
    assert "✗ mismatched   No insults" in body


def test_reused_attempts_are_testcases_that_say_where_they_came_from(runs: Runs, tmp_path: Path) -> None:
    first = runs.begin()
    old = runs.seal(runs.attempt(first, "e/old", AttemptState.FAILED), )
    runs.finish(first)
    second = runs.begin()
    runs.reuse(second, old)
    runs.finish(second)
    got = cases(ET.parse(write_junit(runs.store, second, tmp_path / "j.xml")).getroot())
    assert f"reused from run {first}" in (got["exp::e/old"].findtext("system-out") or "")
    assert got["exp::e/old"].find("failure") is not None


def test_written_atomically_replacing_the_old_file_and_leaving_no_temp_files(runs: Runs, tmp_path: Path) -> None:
    run = mixed_run(runs)
    target = tmp_path / "junit.xml"
    target.write_text("old contents", encoding="utf-8")
    write_junit(runs.store, run, target)
    assert ET.parse(target).getroot().tag == "testsuites"
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    assert target.stat().st_mode & 0o044  # an ordinary readable report, not a private temp file


def test_text_that_xml_cannot_hold_still_gives_a_parseable_file(runs: Runs, tmp_path: Path) -> None:
    run = runs.begin()
    bad = runs.attempt(run, "e/\x00nul", AttemptState.FAILED)
    runs.seal(bad, result(bad, 0, "mismatched", "x\x01y\x1b[2J\ufffe", explanation="\x0b\x0c\x1f"))
    runs.finish(run)
    root = ET.parse(write_junit(runs.store, run, tmp_path / "j.xml")).getroot()
    failure = next(root.iter("failure"))
    assert failure.get("message") == "x\\x01y\\x1b[2J\\ufffe"


FAILING = """
from niceeval_cli import define_eval
from niceeval_cli.expect import equals

@define_eval(attempts=2)
def refund(t):
    t.check("14 days", equals("30 days")).label("Mentions 30 days")

@define_eval()
def ok(t):
    t.check(1, equals(1)).label("fine")
"""


def test_run_junit_writes_the_report_and_keeps_the_exit_code(project) -> None:
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/support.py", FAILING)
    result = project.run("--junit", "reports/junit.xml")
    assert result.exit_code == 1
    root = ET.parse(project.root / "reports" / "junit.xml").getroot()
    names = sorted(c.get("name") or "" for c in root.iter("testcase"))
    assert names == ["support/ok", "support/refund"]
    assert root.get("failures") == "1"
    [failure] = root.iter("failure")
    assert failure.get("message") == "Mentions 30 days"  # the failing labels (cli.md, "JUnit")
    assert (failure.text or "").count("FAILED  default · support/refund#") == 2


def test_run_junit_to_an_unwritable_place_is_a_usage_error_after_sealing(project) -> None:
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/support.py", FAILING)
    (project.root / "taken").mkdir()
    result = project.run("--junit", "taken")
    assert result.exit_code == 2
    assert "--junit taken" in result.stderr and "sealed in run" in result.stderr
    assert len(project.attempts()) == 3


JUDGED = """
from niceeval_cli import define_eval
from niceeval_cli.expect import closed_qa


@define_eval(judge=True)
async def capital(t):
    t.check({"input": "Capital of France?", "output": "Paris"}, closed_qa("Names it?").at_least(1)).gate()
"""


def test_slots_a_setup_error_kept_from_running_are_skipped_testcases_not_missing(project) -> None:
    """The judge is down: the preflight fails, nothing is dispatched, exit 3. The JUnit file
    counted 0 tests (a green, empty report beside a red exit code); each planned slot is now a
    testcase, `<skipped>` "not run" as a missing shard's are."""
    from junitparser import JUnitXml, Skipped

    from tests.support.loopback import free_port

    project.write("niceeval.toml", f'[project]\nattempts = 2\n[judge]\nmodel = "m"\n'
                  f'base_url = "http://127.0.0.1:{free_port()}/v1"\napi_key_env = "JK"\nmax_retries = 0\n')
    project.write("evals/geo.py", JUDGED)
    result = project.run("--junit", "junit.xml", env={"JK": "sk-test-0123456789abcdef0123"})
    assert result.exit_code == 3, result.stdout + result.stderr
    xml = JUnitXml.fromfile(str(project.root / "junit.xml"))
    (suite,) = list(xml)
    assert (suite.tests, suite.failures, suite.errors, suite.skipped) == (2, 0, 0, 2)
    found = {(case.classname, case.name): case.result for case in suite}
    assert set(found) == {("default", "geo#0"), ("default", "geo#1")}
    for outcome in found.values():
        (skipped,) = outcome
        assert isinstance(skipped, Skipped) and "not run" in (skipped.message or "") and "exit 3" in skipped.message


CASES = """
from niceeval_cli import Case, define_eval
from niceeval_cli.expect import equals


@define_eval(cases=[Case(id=f"c{i}<&\\x1b\\x00", value=i) for i in range(6)])
def numbered(t, case):
    t.check(case, equals(case)).label("same")
"""


def test_a_missing_shards_slots_with_control_characters_in_their_ids_give_valid_xml(project) -> None:
    """`merge --junit` named a missing shard's slots raw: a case id holding \\x00 made the file
    unreadable XML. They are escaped as every other testcase name is."""
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/many.py", CASES)
    assert project.run("--shard", "1/2", "--store", "one.db").exit_code == 0
    merged = project.cli("merge", "one.db", "--into", "merged.db", "--junit", "merged.xml", "--exit-code")
    assert merged.exit_code == 5, merged.stdout + merged.stderr
    root = ET.parse(project.root / "merged.xml").getroot()
    skipped = [c.get("name") or "" for c in root.iter("testcase") if c.find("skipped") is not None]
    ran = [c for c in root.iter("testcase") if c.find("skipped") is None]
    assert skipped and ran and int(root.get("skipped") or 0) == len(skipped)
    assert all("\\x1b\\x00]#0" in name and "<&" in name for name in skipped), skipped
