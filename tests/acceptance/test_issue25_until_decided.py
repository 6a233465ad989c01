"""Issue 25, item 4, from the outside: `run --until-decided` gives an eval more attempts only while
its Wilson interval contains its numeric pass_rule (statistics.md, "Deciding with enough evidence").

A stand-in app passes the first k attempts of each message (k from the environment), so how many
attempts each eval needs is known in advance: with pass_rule 0.8 at 95 %, 16 passes in a row
decide `passed` (15/15 is [0.796, 1]); 0/5 is decided `failed` at once ([0, 0.43]); 7 of 8 is
still undecided at `--max-attempts 8` ([0.53, 0.98] contains 0.8)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.pattern_app import APP
from tests.support.project import Project

EVALS = """
from niceeval_cli import define_eval
from niceeval_cli.expect import equals


async def ask(t, message):
    turn = await t.send(message)
    t.check(turn.message, equals("yes")).label("Says yes")


@define_eval()
async def good(t):
    await ask(t, "good")


@define_eval()
async def bad(t):
    await ask(t, "bad")


@define_eval()
async def mid(t):
    await ask(t, "mid")
"""

COSTLY = """
import os
import threading
from collections import Counter

_seen = Counter()
_lock = threading.Lock()


def reply(message):
    with _lock:
        n = _seen[message]
        _seen[message] += 1
    ok = n < int(os.environ["PASSES_" + message])
    return {"message": "yes" if ok else "no", "usage": {"input_tokens": 1, "output_tokens": 1, "cost_usd": 0.01}}
"""

PASSES = {"PASSES_good": "100", "PASSES_bad": "0", "PASSES_mid": "7", "NO_COLOR": "1", "COLUMNS": "200"}


@pytest.fixture
def proj(tmp_path: Path) -> Project:
    proj = Project(tmp_path / "proj", in_process=True)
    proj.write("app.py", APP)
    proj.write("costly.py", COSTLY)
    proj.write("evals/pattern.py", EVALS)
    proj.write("niceeval.toml", '[project]\nattempts = 5\npass_rule = 0.8\nmax_concurrency = 4\n\n'
               '[experiments.local]\nadapter = "python"\n[experiments.local.options]\ncallable = "app:reply"\n\n'
               '[experiments.paid]\nadapter = "python"\n[experiments.paid.options]\ncallable = "costly:reply"\n')
    return proj


def _attempts(proj: Project, run_id: str) -> dict[str, list[int]]:
    rows = proj.sql("SELECT eval_id, ordinal FROM run_slots WHERE run_id = ? ORDER BY eval_id, ordinal", [run_id])
    found: dict[str, list[int]] = {}
    for row in rows:
        found.setdefault(row["eval_id"], []).append(row["ordinal"])
    return found


def _last_run(proj: Project) -> str:
    return proj.sql("SELECT id FROM runs ORDER BY started_at DESC LIMIT 1")[0]["id"]


def test_more_attempts_only_while_the_interval_contains_the_rule(proj: Project) -> None:
    done = proj.run("pattern/good", "pattern/bad", "-e", "local", "--until-decided", env=PASSES)
    assert done.returncode == 1, done.stdout + done.stderr  # bad failed definitively
    run_id = _last_run(proj)
    attempts = _attempts(proj, run_id)
    assert attempts == {"pattern/bad": list(range(5)), "pattern/good": list(range(16))}, attempts
    rules = {r["pass_rule"] for r in proj.sql("SELECT DISTINCT pass_rule FROM run_slots WHERE run_id = ?", [run_id])}
    assert rules == {"0.8 until decided at 0.95"}
    states = proj.sql("SELECT eval_id, state, count(*) AS n FROM attempts WHERE run_id = ? GROUP BY 1, 2", [run_id])
    assert {(r["eval_id"], r["state"], r["n"]) for r in states} == {
        ("pattern/good", "passed", 16), ("pattern/bad", "failed", 5)}
    assert "2 evals: 1 failed, 1 passed" in done.stdout, done.stdout


def test_still_undecided_at_the_cap_is_insufficient_evidence_and_exit_5(proj: Project) -> None:
    done = proj.run("pattern/mid", "-e", "local", "--until-decided", "--max-attempts", "8", env=PASSES)
    assert done.returncode == 5, done.stdout + done.stderr
    assert _attempts(proj, _last_run(proj)) == {"pattern/mid": list(range(8))}
    assert "insufficient evidence (7/8, [0.53, 0.98] contains 0.8)" in done.stdout, done.stdout
    assert "1 eval: 1 undecided" in done.stdout and "1 eval undecided (insufficient evidence)" in done.stdout
    view = proj.cli("view", env={"NO_COLOR": "1", "COLUMNS": "200"})
    assert "insufficient evidence (7/8, [0.53, 0.98] contains 0.8)" in view.stdout, view.stdout


def test_pass_rule_1_with_every_attempt_passing_is_undecided_never_failed(proj: Project) -> None:
    """13 of 13 passed: the interval's high end is 1, which contains a rule of 1 — exit 5, not the
    `failed` / exit 1 an ulp-short high end (0.9999999999999999 < 1) once gave."""
    toml = proj.root / "niceeval.toml"
    toml.write_text(toml.read_text().replace("pass_rule = 0.8", "pass_rule = 1"))
    done = proj.run("pattern/good", "-e", "local", "--until-decided", "--max-attempts", "13", env=PASSES)
    assert done.returncode == 5, done.stdout + done.stderr
    assert "insufficient evidence (13/13, [0.77, 1.00] contains 1)" in done.stdout, done.stdout
    assert "1 eval: 1 undecided" in done.stdout, done.stdout


def test_junit_reports_an_undecided_eval_as_an_error_saying_why(proj: Project) -> None:
    from junitparser import Error, JUnitXml

    done = proj.run("pattern/mid", "-e", "local", "--until-decided", "--max-attempts", "8", "--junit", "out.xml",
                    env=PASSES)
    assert done.returncode == 5, done.stdout + done.stderr
    (case,) = [c for suite in JUnitXml.fromfile(str(proj.root / "out.xml")) for c in suite]
    (error,) = [r for r in case.result if isinstance(r, Error)]
    assert error.type == "undecided"
    assert error.message == "insufficient evidence (7/8, [0.53, 0.98] contains 0.8)"


def test_dry_says_how_far_the_plan_may_grow(proj: Project) -> None:
    dry = proj.run("-e", "local", "--until-decided", "--max-attempts", "8", "--dry", env=PASSES)
    assert dry.returncode == 0, dry.stdout + dry.stderr
    # 15 configured slots, and up to 3 more for each of the 3 evals: the plan alone promised 15
    assert "15 slot(s): 15 to execute, 0 to reuse; nothing was run (--dry)" in dry.stdout, dry.stdout
    assert ("--until-decided may add up to 9 slot(s): to the 3 evals with a numeric pass_rule, one at a time "
            "while undecided, up to 8 attempts each") in dry.stdout, dry.stdout
    plain = proj.run("-e", "local", "--dry", env=PASSES)
    assert "--until-decided" not in plain.stdout, plain.stdout


def test_the_extra_attempts_are_reused_by_a_later_run(proj: Project) -> None:
    first = proj.run("pattern/good", "-e", "local", "--until-decided", env=PASSES)
    assert first.returncode == 0, first.stdout + first.stderr
    again = proj.run("pattern/good", "-e", "local", "--until-decided", env=PASSES)
    assert again.returncode == 0, again.stdout + again.stderr
    run_id = _last_run(proj)
    relations = proj.sql("SELECT relation, count(*) AS n FROM run_slots WHERE run_id = ? GROUP BY 1", [run_id])
    assert {(r["relation"], r["n"]) for r in relations} == {("reference", 16)}, relations
    assert "16 result(s) reused" in again.stdout, again.stdout


def test_without_the_flag_the_point_rule_decides_and_nothing_is_added(proj: Project) -> None:
    done = proj.run("pattern/good", "-e", "local", env=PASSES)
    assert done.returncode == 0, done.stdout + done.stderr
    assert _attempts(proj, _last_run(proj)) == {"pattern/good": list(range(5))}


def test_the_budget_stops_the_extra_attempts(proj: Project) -> None:
    done = proj.run("pattern/good", "-e", "paid", "--until-decided", "--budget", "0.08", env=PASSES)
    assert done.returncode == 5, done.stdout + done.stderr  # stopped undecided: not enough evidence
    sealed = proj.sql("SELECT count(*) AS n FROM attempts WHERE run_id = ?", [_last_run(proj)])[0]["n"]
    assert 8 <= sealed < 16, sealed


@pytest.mark.parametrize(("args", "words"), [
    (["--max-attempts", "8"], "--max-attempts applies only with --until-decided"),
    (["--until-decided", "--shard", "1/2"], "--until-decided cannot be combined with --shard"),
    (["--until-decided", "--max-attempts", "0"], "--max-attempts"),
])
def test_flag_mistakes_are_usage_errors(proj: Project, args: list[str], words: str) -> None:
    done = proj.run(*args, env=PASSES)
    assert done.returncode == 2, done.stdout + done.stderr
    assert words in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert proj.sql("SELECT count(*) AS n FROM attempts")[0]["n"] == 0 if proj.store.exists() else True


# ── what the run planned: its plan grows a round at a time, and so does its planned total ──────


def _run_row(proj: Project, run_id: str) -> dict[str, object]:
    (row,) = [r for r in proj.query_json("runs") if r["id"] == run_id]
    return row


def test_the_planned_total_is_the_plan_the_rounds_grew_to(proj: Project) -> None:
    """5 configured slots an eval, grown to 16 (good, passed) and 13 (mid, 7/13 failed): `query runs`
    says 29 planned, none not run, as the plan rows do (it said 10, the first round's), and `view`
    says nothing was skipped."""
    done = proj.run("pattern/good", "pattern/mid", "-e", "local", "--until-decided", env=PASSES)
    assert done.returncode == 1, done.stdout + done.stderr
    run_id = _last_run(proj)
    assert _attempts(proj, run_id) == {"pattern/good": list(range(16)), "pattern/mid": list(range(13))}
    plan = proj.sql("SELECT count(*) AS n FROM run_plan WHERE run_id = ?", [run_id])[0]["n"]
    row = _run_row(proj, run_id)
    assert (row["planned_total"], row["not_run"], plan) == (29, 0, 29), row
    view = proj.cli("view", run_id, env={"NO_COLOR": "1", "COLUMNS": "200"})
    assert view.returncode == 0 and "planned" not in view.stdout, view.stdout


def test_a_budget_stopped_round_reads_alike_everywhere(proj: Project) -> None:
    """The budget stops the run with its last round planned (9 slots) and one slot never started:
    `query runs`, `view`, the summary, the report and JUnit all say 1 of 9."""
    from junitparser import JUnitXml, Skipped

    done = proj.run("pattern/good", "-e", "paid", "--until-decided", "--budget", "0.08", "--junit", "out.xml",
                    env=PASSES)
    assert done.returncode == 5, done.stdout + done.stderr
    run_id = _last_run(proj)
    row = _run_row(proj, run_id)
    assert (row["status"], row["planned_total"], row["not_run"]) == ("budget-exhausted", 9, 1), row
    words = "1 of 9 planned slots were not run"
    assert words in done.stdout, done.stdout
    view = proj.cli("view", run_id, env={"NO_COLOR": "1", "COLUMNS": "200"})
    assert words in view.stdout, view.stdout
    report = proj.cli("report", run_id, "--out", "report.html")
    assert report.returncode == 0, report.stderr
    assert words in (proj.root / "report.html").read_text(encoding="utf-8")
    cases = [c for suite in JUnitXml.fromfile(str(proj.root / "out.xml")) for c in suite]
    skipped = [c for c in cases if any(isinstance(r, Skipped) for r in c.result)]
    assert len(cases) == 2 and len(skipped) == 1, [c.name for c in cases]  # the eval, its slot #8 not run


def test_a_later_run_reusing_the_extra_attempts_plans_them_too(proj: Project) -> None:
    first = proj.run("pattern/good", "-e", "local", "--until-decided", env=PASSES)
    assert first.returncode == 0, first.stdout + first.stderr
    again = proj.run("pattern/good", "-e", "local", "--until-decided", env=PASSES)
    assert again.returncode == 0, again.stdout + again.stderr
    row = _run_row(proj, _last_run(proj))
    assert (row["planned_total"], row["not_run"]) == (16, 0), row  # 5 reused at the start, 11 a round at a time
