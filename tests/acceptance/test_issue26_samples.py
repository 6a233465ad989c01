"""Issue 26 item 1 (judge-trust.md §1): `judge.samples` and `judge.min_agreement`.

The CLI (in process) against a real loopback judge that answers each request
from a script (so the samples of one assertion disagree); stored rows read with sqlite3, `view`
read as a user reads it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.loopback import JudgeServer, Reply
from tests.support.project import Project as Proj


@pytest.fixture
def proj(project: Proj) -> Proj:
    """The CLI in process (tests/conftest.py `project`): these checks read exit codes, output and
    stored rows; what is about a process (signals, pipes) still starts the real `niceeval`."""
    return project


ENV = {"JK": "sk-test-samplesKey0123456789abcdef"}

EVALS = '''
from niceeval_cli import define_eval
from niceeval_cli.expect import closed_qa

QA = {"input": "What is the capital of France?", "output": "Paris."}


@define_eval(judge=True)
def capital(t):
    t.check(QA, closed_qa("Does it name the capital?").at_least(1)).gate().label("capital")
'''


@pytest.fixture
def judge() -> Iterator[JudgeServer]:
    server = JudgeServer().start()
    try:
        yield server
    finally:
        server.stop()


def _project(proj: Proj, judge: JudgeServer, judge_fields: str = "", evals: str = EVALS) -> None:
    proj.write("niceeval.toml", f'''
        [judge]
        model = "judge-m"
        base_url = "{judge.base_url}"
        api_key_env = "JK"
        max_retries = 0
        {judge_fields}
    ''')
    proj.write("evals/e.py", evals)


def _script(judge: JudgeServer, *replies: Reply) -> None:
    """The judge's answers in order: the preflight's ping first, then one per grading request."""
    judge.enqueue(Reply.tool("Y", "preflight"), *replies)


def _result(proj: Proj) -> dict[str, object]:
    (row,) = proj.sql("SELECT r.state, r.reason, r.measurement, r.agreement, r.judge_samples, r.judge_tokens, "
                      "r.judge_audit, r.explanation, a.state AS attempt_state, a.judge_tokens AS attempt_tokens "
                      "FROM assertion_results r JOIN attempts a ON a.id = r.attempt_id "
                      "WHERE r.match_name = 'closed_qa' ORDER BY a.ended_at DESC LIMIT 1")
    return row


def test_five_samples_that_disagree_take_the_low_median_and_store_their_agreement(proj: Proj, judge: JudgeServer):
    _project(proj, judge, "samples = 5")
    judge.latency_s = 0.3  # the five requests overlap only if they are sent at once
    _script(judge, *(Reply.tool(c, f"sample says {c}") for c in "YYNNN"))
    done = proj.run(env=ENV)
    assert done.returncode == 1, done.stdout + done.stderr  # the median, 0, is below the required 1
    assert len(judge.grading_requests) == 5 and judge.max_in_flight == 5
    row = _result(proj)
    assert (row["state"], row["measurement"], row["agreement"], row["judge_samples"]) == ("below", 0.0, 0.6, 5)
    assert row["judge_tokens"] == row["attempt_tokens"] == 5 * 120  # every sample's tokens count
    assert str(row["explanation"]).endswith("N: sample says N")  # a sample at the median speaks
    audit = json.loads(str(row["judge_audit"]))
    assert sorted(s["measurement"] for s in audit["samples"]) == [0, 0, 0, 1, 1]
    assert sorted(s["explanation"] for s in audit["samples"]) == ["N: sample says N"] * 3 + ["Y: sample says Y"] * 2
    view = proj.cli("view", env=ENV)
    assert "0.00 < 1.00 required · 3 of 5 samples agree" in view.stdout, view.stdout


def test_agreement_below_min_agreement_is_judge_inconsistent_and_decides_no_gate(proj: Proj, judge: JudgeServer):
    _project(proj, judge, "samples = 5\nmin_agreement = 0.8")
    _script(judge, *(Reply.tool(c) for c in "YYYNN"))
    done = proj.run(env=ENV)
    assert done.returncode == 5, done.stdout + done.stderr  # unavailable evidence, never a pass or a fail
    row = _result(proj)
    assert (row["state"], row["reason"], row["measurement"]) == ("unavailable", "judge-inconsistent", None)
    assert (row["agreement"], row["judge_samples"], row["attempt_state"]) == (0.6, 5, "errored")
    explanation = str(row["explanation"])
    assert "3 of 5 agree" in explanation and "(agreement 0.6 < min_agreement 0.8)" in explanation
    view = proj.cli("view", env=ENV)
    assert "judge-inconsistent" in view.stdout and "3 of 5 samples agree" in view.stdout, view.stdout


def test_agreement_at_the_floor_decides_as_usual(proj: Proj, judge: JudgeServer):
    _project(proj, judge, "samples = 5\nmin_agreement = 0.8")
    _script(judge, *(Reply.tool(c) for c in "YYYYN"))
    assert proj.run(env=ENV).returncode == 0
    row = _result(proj)
    assert (row["state"], row["measurement"], row["agreement"]) == ("met", 1.0, 0.8)


def test_too_few_measured_samples_are_unavailable_with_the_most_frequent_reason(proj: Proj, judge: JudgeServer):
    _project(proj, judge, "samples = 3")
    _script(judge, Reply.error(503), Reply.error(503), Reply.tool("Y"))
    assert proj.run(env=ENV).returncode == 5
    row = _result(proj)
    assert (row["state"], row["reason"], row["agreement"]) == ("unavailable", "judge-transport-error", None)
    assert "only 1 of 3 judge samples" in str(row["explanation"])


def test_a_failed_sample_leaves_the_agreement_over_the_measured_ones(proj: Proj, judge: JudgeServer):
    _project(proj, judge, "samples = 3")
    _script(judge, Reply.error(503), Reply.tool("Y"), Reply.tool("Y"))
    assert proj.run(env=ENV).returncode == 0
    row = _result(proj)
    assert (row["state"], row["measurement"], row["agreement"], row["judge_samples"]) == ("met", 1.0, 1.0, 2)
    audit = json.loads(str(row["judge_audit"]))
    assert sorted(str(s.get("reason")) for s in audit["samples"]) == ["None", "None", "judge-transport-error"]


def test_an_invalid_response_in_any_sample_errs_the_assertion(proj: Proj, judge: JudgeServer):
    _project(proj, judge, "samples = 3")
    _script(judge, Reply.tool("Y"), Reply.text("I refuse to grade"), Reply.tool("Y"))
    assert proj.run(env=ENV).returncode == 5  # an errored attempt, as with one request
    row = _result(proj)
    assert (row["state"], row["reason"], row["attempt_state"]) == ("errored", "judge-invalid-response", "errored")


def test_one_sample_is_the_default_and_stores_no_agreement(proj: Proj, judge: JudgeServer):
    _project(proj, judge)
    judge.default = Reply.tool("Y")
    assert proj.run(env=ENV).returncode == 0
    row = _result(proj)
    assert (row["agreement"], row["judge_samples"]) == (None, None) and len(judge.grading_requests) == 1
    assert "samples" not in json.loads(str(row["judge_audit"]))
    assert "samples agree" not in proj.cli("view", env=ENV).stdout


def test_samples_follow_the_precedence_and_enter_the_fingerprint(proj: Proj, judge: JudgeServer):
    judge.default = Reply.tool("Y")
    _project(proj, judge, "samples = 5", evals=EVALS.replace("judge=True", 'judge={"samples": 3}'))
    assert proj.run(env=ENV).returncode == 0
    assert len(judge.grading_requests) == 3  # the eval's 3 over the project's 5
    again = proj.run(env=ENV)
    assert "1 reused" in again.stdout and len(judge.grading_requests) == 3, again.stdout
    _project(proj, judge, "samples = 5")  # the eval now inherits 5: another judge, run again
    changed = proj.run(env=ENV)
    assert "0 reused" in changed.stdout and len(judge.grading_requests) == 8, changed.stdout
    _project(proj, judge, "samples = 5\nmin_agreement = 0.6")
    assert "0 reused" in proj.run(env=ENV).stdout


@pytest.mark.parametrize(("line", "expected"), [
    ("samples = 0", "an integer from 1 to 100"),
    ("samples = 101", "an integer from 1 to 100"),
    ('samples = "3"', "an integer from 1 to 100"),
    ("min_agreement = 1.5", "a number in (0, 1]"),
    ("min_agreement = 0", "a number in (0, 1]"),
])
def test_a_bad_samples_setting_is_a_usage_error_naming_the_key(proj: Proj, judge: JudgeServer, line, expected):
    _project(proj, judge, line)
    done = proj.run(env=ENV)
    assert done.returncode == 2 and line.split()[0] in done.stderr and expected in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.slow
def test_on_ray_each_worker_grades_through_the_same_seam_with_its_samples(tmp_path: Path, judge: JudgeServer):
    """The Ray worker makes its grader from the run's grader name: samples work there too. The run
    starts its own local Ray, so it is a real `niceeval` process (never a Ray driver in pytest's)."""
    proj = Proj(tmp_path / "ray")
    import shutil
    import tempfile

    from tests.support.components import need_ray

    need_ray()
    _project(proj, judge, "samples = 3")
    _script(judge, *(Reply.tool(c) for c in "YNN"))
    own = tempfile.mkdtemp(prefix="nsr", dir="/tmp")  # this test's own Ray session folder
    try:
        done = proj.run("--executor", "ray", env={**ENV, "RAY_TMPDIR": own, "RAY_AUTH_MODE": "disabled",
                                                  "RAY_USAGE_STATS_ENABLED": "0"}, timeout=300)
        assert done.returncode == 1, done.stdout + done.stderr
    finally:
        shutil.rmtree(own, ignore_errors=True)
    assert len(judge.grading_requests) == 3
    row = _result(proj)
    assert (row["state"], row["measurement"], row["agreement"], row["judge_samples"]) == ("below", 0.0,
                                                                                         pytest.approx(2 / 3), 3)
