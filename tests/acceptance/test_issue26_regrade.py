"""Issue 26 items 2 and 8 (judge-trust.md §2): judge inputs stored at sealing, and `niceeval regrade`.

The CLI (in process; Ctrl-C in a real process) against real loopback servers: a judge that grades by model
(it counts the grading requests each model got) and a system under test the eval code calls (it
must get no request while a run is regraded). Stored rows are read with sqlite3."""

from __future__ import annotations

import hashlib
import json
import signal
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from niceeval_cli.store import SCHEMA_VERSION
from tests.support.judged_project import (
    ENV,
    Judges,
    answering_sut,
    latest_run,
    running_judges,
    write_judged_project,
)
from tests.support.loopback import Loopback, Reply
from tests.support.project import Project as Proj
from tests.support.project import stop, wait_for


@pytest.fixture
def proj(project: Proj) -> Proj:
    """The CLI in process (tests/conftest.py `project`): these checks read exit codes, output and
    stored rows; what is about a process (signals, pipes) still starts the real `niceeval`."""
    return project


STORE_DUMPS = Path(__file__).resolve().parents[1] / "store" / "data"  # every schema dump lives there



# A store of the previous schema (tests/store/data/schema8_judged.sql) was made by
# the NiceEval before judge inputs from these two files: the same files today make the same
# fingerprints, so a new run in that store reuses its attempts (which have no judge inputs).
SCHEMA8_TOML = """
[project]
attempts = {attempts}

[judge]
model = "judge-a"
base_url = "http://127.0.0.1:9/v1"
api_key_env = "JK_LATER"
max_retries = 0
"""
SCHEMA8_EVALS = """
from niceeval_cli import define_eval
from niceeval_cli.expect import closed_qa, equals

QA = {"input": "What is the capital of France?", "output": "Paris."}


@define_eval(judge=True)
def capital(t):
    t.check(QA["output"], equals("Paris.")).label("exact")
    t.check(QA, closed_qa("Does it name the capital?")).label("capital")  # recorded: it decides nothing
"""


@pytest.fixture
def judges() -> Iterator[Judges]:
    with running_judges() as made:
        yield made


@pytest.fixture
def sut() -> Iterator[Loopback]:
    with answering_sut() as server:
        yield server


def _ran(proj: Proj) -> int:
    log = proj.root / "evals" / "ran.log"
    return len(log.read_text().splitlines()) if log.exists() else 0


# ── judge inputs, sealed by `run` ───────────────────────────────────────────────────────────


def test_run_stores_each_distinct_judge_input_once_and_every_judge_result_points_at_it(
        proj: Proj, judges: Judges, sut: Loopback):
    write_judged_project(proj, judges, sut)
    done = proj.run(env=ENV)
    assert done.returncode == 0, done.stdout + done.stderr
    inputs = proj.sql("SELECT sha256, content FROM judge_inputs ORDER BY content")
    assert len(inputs) == 2  # two attempts × two judges, the same two inputs each time
    for row in inputs:
        assert hashlib.sha256(row["content"].encode()).hexdigest() == row["sha256"]
    capital = json.loads(inputs[0]["content"])
    assert capital == {
        "factory": "closed_qa", "question": "Does it name the capital?", "choices": {"Y": 1.0, "N": 0.0},
        "scale_version": "1", "max_material_bytes": 256 * 1024, "max_audit_bytes": 1024 * 1024,
        "subject": {"input": "What is the capital of France?", "output": "Paris."},
    }
    results = proj.sql("SELECT label, judge_input FROM assertion_results ORDER BY label")
    assert {r["label"] for r in results if r["judge_input"] is None} == {"exact"}  # not a judge
    assert {r["judge_input"] for r in results if r["judge_input"]} == {r["sha256"] for r in inputs}
    (run,) = proj.sql("SELECT kind, regrade_of FROM runs")
    assert (run["kind"], run["regrade_of"]) == ("run", None)
    assert [a["regraded_from"] for a in proj.sql("SELECT regraded_from FROM attempts")] == [None, None]


def test_a_judge_input_is_stored_redacted(proj: Proj, judges: Judges, sut: Loopback):
    proj.write("niceeval.toml", f'''
        [judge]
        model = "judge-a"
        base_url = "{judges.server.base_url}"
        api_key_env = "JK"
    ''')
    proj.write("evals/leak.py", '''
        import os
        from niceeval_cli import define_eval
        from niceeval_cli.expect import closed_qa

        @define_eval(judge=True)
        def leak(t):
            t.check({"input": "key?", "output": "the key is " + os.environ["JK"]}, closed_qa("Is it secret?"))
    ''')
    assert proj.run(env=ENV).returncode == 0
    (row,) = proj.sql("SELECT content FROM judge_inputs")
    assert ENV["JK"] not in row["content"] and "[redacted]" in row["content"]


def test_the_file_keeps_judge_inputs_insert_only(proj: Proj, judges: Judges, sut: Loopback):
    write_judged_project(proj, judges, sut, attempts=1)
    assert proj.run(env=ENV).returncode == 0
    con = sqlite3.connect(proj.store)
    try:
        with pytest.raises(sqlite3.DatabaseError, match="insert-only"):
            con.execute("UPDATE judge_inputs SET content = '{}'")
        with pytest.raises(sqlite3.DatabaseError, match="insert-only"):
            con.execute("DELETE FROM judge_inputs")
        sha = con.execute("SELECT sha256 FROM judge_inputs LIMIT 1").fetchone()[0]
        con.execute("INSERT OR REPLACE INTO judge_inputs VALUES (?, 'forged')", [sha])  # skipped, not replaced
        assert con.execute("SELECT content FROM judge_inputs WHERE sha256 = ?", [sha]).fetchone()[0] != "forged"
    finally:
        con.close()


# ── a store from the previous schema ────────────────────────────────────────────────────────


def _schema8_store(proj: Proj, attempts: int = 2) -> None:
    proj.write("niceeval.toml", SCHEMA8_TOML.format(attempts=attempts))
    proj.write("evals/capital.py", SCHEMA8_EVALS)
    proj.store.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(proj.store)
    con.executescript((STORE_DUMPS / "schema8_judged.sql").read_text())
    con.close()


def _all_rows(store: Path) -> dict[str, list[tuple[object, ...]]]:
    con = sqlite3.connect(store)
    try:
        tables = ("runs", "attempts", "assertion_results", "run_slots", "labels")
        return {t: sorted(map(tuple, con.execute(f"SELECT * FROM {t}").fetchall()), key=repr) for t in tables}
    finally:
        con.close()


def test_a_schema_8_store_is_upgraded_keeping_every_earlier_row(proj: Proj):
    _schema8_store(proj)
    before = _all_rows(proj.store)
    assert proj.cli("view", env=ENV).returncode == 0  # a reader upgrades the file
    after = _all_rows(proj.store)
    assert sqlite3.connect(proj.store).execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    for table, rows in before.items():  # each earlier row, with NULL in the new columns
        assert len(after[table]) == len(rows), table
        assert sorted(r[:len(rows[0])] for r in after[table]) == sorted(rows), table
    assert proj.sql("SELECT count(*) AS n FROM judge_inputs")[0]["n"] == 0
    assert {r["judge_input"] for r in proj.sql("SELECT judge_input FROM assertion_results")} == {None}


def test_merge_brings_a_stores_judge_inputs_once(proj: Proj, judges: Judges, sut: Loopback, tmp_path: Path):
    write_judged_project(proj, judges, sut)
    assert proj.run(env=ENV).returncode == 0
    target = tmp_path / "merged.db"
    for _ in range(2):  # merging twice changes nothing
        done = proj.cli("merge", str(proj.store), "--into", str(target), env=ENV)
        assert done.returncode == 0, done.stdout + done.stderr
    assert proj.sql("SELECT count(*) AS n FROM judge_inputs", store=target)[0]["n"] == 2
    assert "2 judge input(s)" in proj.cli("merge", str(proj.store), "--into", str(tmp_path / "m2.db"), env=ENV).stdout


# ── niceeval regrade ────────────────────────────────────────────────────────────────────────


def _rows(proj: Proj, run_id: str) -> list[dict[str, object]]:
    return proj.sql("SELECT a.id, a.state, a.reason, a.regraded_from, a.stop_cause, r.label, r.state AS result, "
                    "r.measurement, r.explanation, r.evidence, r.judge_input, r.agreement, r.judge_samples "
                    "FROM attempts a JOIN assertion_results r ON r.attempt_id = a.id WHERE a.run_id = ? "
                    "ORDER BY a.ordinal, r.ordinal", [run_id])


def test_regrade_with_another_model_judges_again_into_a_new_run_and_never_runs_the_system_under_test(
        proj: Proj, judges: Judges, sut: Loopback):
    write_judged_project(proj, judges, sut)
    assert proj.run(env=ENV).returncode == 0
    original = latest_run(proj)["id"]
    before = _rows(proj, str(original))
    asked, ran = len(sut.requests), _ran(proj)
    assert judges.counts() == {"judge-a": 4}

    done = proj.cli("regrade", "--judge-model", "judge-b", env=ENV)
    assert done.returncode == 1, done.stdout + done.stderr  # the gate fails under judge-b: exit as `run`
    assert len(sut.requests) == asked and _ran(proj) == ran  # no system under test, no eval code
    assert judges.counts() == {"judge-a": 4, "judge-b": 4}  # every judge assertion graded again, by judge-b
    regrade = latest_run(proj)
    assert (regrade["kind"], regrade["regrade_of"], regrade["status"], regrade["exit_code"]) == (
        "regrade", original, "finished", 1)
    after = _rows(proj, str(regrade["id"]))
    assert _rows(proj, str(original)) == before  # insert-only: the original is untouched
    assert len(after) == len(before) == 6
    for old, new in zip(before, after, strict=True):
        assert new["regraded_from"] == old["id"] and new["id"] != old["id"]
        assert new["judge_input"] == old["judge_input"]  # the same stored input, graded again
        if new["label"] == "exact":  # a non-judge result is copied unchanged
            assert {k: new[k] for k in ("result", "measurement", "explanation", "evidence")} == {
                k: old[k] for k in ("result", "measurement", "explanation", "evidence")}
    capital = [r for r in after if r["label"] == "capital"]
    assert {(r["state"], r["result"], r["measurement"]) for r in capital} == {("failed", "below", 0.0)}
    assert all("judge-b disagrees" in str(r["explanation"]) for r in capital)
    assert "2 attempt(s) regraded from their stored judge inputs" in done.stdout, done.stdout
    assert f"details: niceeval view {regrade['id']}" in done.stdout


def test_the_regrade_summary_reads_the_projects_stats_as_run_does(proj: Proj, judges: Judges, sut: Loopback):
    """`[stats] confidence = 0.8`: the regrade's summary printed 95 % intervals (0/2 → [0%, 66%]) where
    `run` and `view` print 80 % ones ([0%, 45%]) for the same counts."""
    write_judged_project(proj, judges, sut)
    toml = proj.root / "niceeval.toml"
    toml.write_text(toml.read_text() + "\n[stats]\nconfidence = 0.8\n")
    assert proj.run(env={**ENV, "NO_COLOR": "1", "COLUMNS": "200"}).returncode == 0
    done = proj.cli("regrade", "--judge-model", "judge-b", env={**ENV, "NO_COLOR": "1", "COLUMNS": "200"})
    assert done.returncode == 1, done.stdout + done.stderr
    assert "0/2 passed · 0% [0%, 45%]" in done.stdout, done.stdout
    view = proj.cli("view", env={**ENV, "NO_COLOR": "1", "COLUMNS": "200"})
    assert "0/2 passed · 0% [0%, 45%]" in view.stdout, view.stdout


def test_regrade_with_the_same_judge_passes_as_the_run_did_and_reads_like_any_run(
        proj: Proj, judges: Judges, sut: Loopback):
    write_judged_project(proj, judges, sut)
    assert proj.run(env=ENV).returncode == 0
    original = str(latest_run(proj)["id"])
    done = proj.cli("regrade", original, env=ENV)
    assert done.returncode == 0, done.stdout + done.stderr
    regrade = str(latest_run(proj)["id"])
    assert {r["state"] for r in _rows(proj, regrade)} == {"passed"}
    view = proj.cli("view", regrade, env=ENV)
    assert view.returncode == 0 and "passed" in view.stdout, view.stdout + view.stderr
    runs = {r["id"]: r for r in proj.query_json("runs")}
    assert (runs[regrade]["kind"], runs[regrade]["regrade_of"]) == ("regrade", original)
    assert (runs[original]["kind"], runs[original]["regrade_of"]) == ("run", None)
    attempts = proj.query_json("attempts", "--run", regrade)
    assert len(attempts) == 2 and {a["state"] for a in attempts} == {"passed"}
    attempt = str(attempts[0]["id"])
    shown = proj.cli("view", f"@{attempt}", env=ENV)
    assert shown.returncode == 0 and "capital" in shown.stdout, shown.stdout + shown.stderr
    report = proj.cli("report", regrade, "--out", str(proj.root / "r.html"), env=ENV)
    assert report.returncode == 0, report.stdout + report.stderr


def test_compare_and_judge_agreement_between_set_a_run_against_its_regrade(
        proj: Proj, judges: Judges, sut: Loopback):
    write_judged_project(proj, judges, sut)
    assert proj.run(env=ENV).returncode == 0
    original = str(latest_run(proj)["id"])
    assert proj.cli("regrade", "--judge-model", "judge-b", env=ENV).returncode == 1
    regrade = str(latest_run(proj)["id"])
    compared = proj.cli("compare", original, regrade, env=ENV)
    assert compared.returncode in (0, 1), compared.stdout + compared.stderr
    assert "regressed" in compared.stdout.lower() and "capital" in compared.stdout, compared.stdout
    between = proj.cli("judge", "agreement", "--between", original, regrade, "--format", "json", env=ENV)
    assert between.returncode == 0, between.stdout + between.stderr
    rows = json.loads(between.stdout)
    rows = rows if isinstance(rows, list) else rows.get("identities", rows.get("rows", []))
    models = {(r.get("model"), r.get("reference_model")) for r in rows}
    assert ("judge-b", "judge-a") in models, between.stdout
    capital = next(r for r in rows if str(r.get("criterion", "")).startswith("Does it name"))
    assert capital["pairs"] == 2 and capital["fn"] == 2, capital  # judge-a said pass, judge-b fail


def test_regrade_dry_prints_what_would_change_and_writes_nothing(proj: Proj, judges: Judges, sut: Loopback):
    write_judged_project(proj, judges, sut)
    assert proj.run(env=ENV).returncode == 0
    counts = {t: proj.sql(f"SELECT count(*) AS n FROM {t}")[0]["n"] for t in ("runs", "attempts", "assertion_results")}
    done = proj.cli("regrade", "--judge-model", "judge-b", "--judge-samples", "3", "--dry", env=ENV)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "regrade  default · capital#0" in done.stdout and "regrade  default · capital#1" in done.stdout
    assert "model judge-a → judge-b" in done.stdout and "samples 1 → 3" in done.stdout, done.stdout
    assert "nothing was written (--dry)" in done.stdout
    assert counts == {t: proj.sql(f"SELECT count(*) AS n FROM {t}")[0]["n"] for t in counts}
    assert judges.counts() == {"judge-a": 4}  # --dry asks no judge


def test_regrade_with_samples_sends_each_assertion_n_times_and_stores_the_agreement(
        proj: Proj, judges: Judges, sut: Loopback):
    write_judged_project(proj, judges, sut, attempts=1)
    assert proj.run(env=ENV).returncode == 0
    done = proj.cli("regrade", "--judge-samples", "3", env=ENV)
    assert done.returncode == 0, done.stdout + done.stderr
    assert judges.counts() == {"judge-a": 2 + 2 * 3}
    regraded = [r for r in _rows(proj, str(latest_run(proj)["id"])) if r["label"] == "capital"]
    assert [(r["agreement"], r["judge_samples"]) for r in regraded] == [(1.0, 3)]


def test_a_stop_at_a_judge_the_new_judge_would_pass_is_regrade_stopped_continuation(
        proj: Proj, judges: Judges, sut: Loopback):
    write_judged_project(proj, judges, sut, attempts=1)
    proj.write("niceeval.toml", (proj.root / "niceeval.toml").read_text().replace('"judge-a"', '"judge-b"'))
    done = proj.run(env=ENV)
    assert done.returncode == 1, done.stdout + done.stderr  # judge-b: the capital gate fails and stops there
    original = _rows(proj, str(latest_run(proj)["id"]))
    assert [r["label"] for r in original] == ["exact", "capital"]  # `polite` never ran
    assert original[0]["stop_cause"] == "capital: below"

    done = proj.cli("regrade", "--judge-model", "judge-a", env=ENV)
    assert done.returncode == 5, done.stdout + done.stderr  # errored: undecided, as `run` exits
    regraded = _rows(proj, str(latest_run(proj)["id"]))
    assert [r["label"] for r in regraded] == ["exact", "capital"], done.stdout  # nothing invented
    assert (regraded[1]["result"], regraded[0]["state"], regraded[0]["reason"]) == (
        "met", "errored", "regrade-stopped-continuation")
    assert "regrade-stopped-continuation" in done.stdout, done.stdout


def test_a_stop_the_new_judge_also_makes_stays_a_stop(proj: Proj, judges: Judges, sut: Loopback):
    write_judged_project(proj, judges, sut, attempts=1)
    proj.write("niceeval.toml", (proj.root / "niceeval.toml").read_text().replace('"judge-a"', '"judge-b"'))
    assert proj.run(env=ENV).returncode == 1
    assert proj.cli("regrade", env=ENV).returncode == 1  # judge-b again: failed, still stopped there
    (row, *_) = _rows(proj, str(latest_run(proj)["id"]))
    assert (row["state"], row["reason"], row["stop_cause"]) == ("failed", None, "capital: below")


def test_an_unreachable_new_judge_is_a_setup_error_and_regrades_nothing(proj: Proj, judges: Judges, sut: Loopback):
    write_judged_project(proj, judges, sut, attempts=1)
    assert proj.run(env=ENV).returncode == 0
    done = proj.cli("regrade", "--judge-base-url", "http://127.0.0.1:9/v1", env=ENV)
    assert done.returncode == 3, done.stdout + done.stderr
    run = latest_run(proj)
    assert (run["kind"], run["status"], run["exit_code"]) == ("regrade", "setup-error", 3)
    assert proj.sql("SELECT count(*) AS n FROM attempts WHERE run_id = ?", [run["id"]])[0]["n"] == 0
    assert "127.0.0.1:9" in done.stdout + done.stderr


def test_an_unavailable_judge_leaves_the_regrade_undecided(proj: Proj, judges: Judges, sut: Loopback):
    write_judged_project(proj, judges, sut, attempts=1)
    assert proj.run(env=ENV).returncode == 0
    judges.server.when("judge-c", Reply.error(503))
    judges.server.models = None
    done = proj.cli("regrade", "--judge-model", "judge-c", env=ENV)
    assert done.returncode in (3, 5), done.stdout + done.stderr


@pytest.mark.parametrize(("args", "named"), [
    (("NOSUCHRUN",), "NOSUCHRUN"),
    (("-e", "nosuch"), "-e nosuch"),
    (("--judge-samples", "0"), "--judge-samples"),
    (("--judge-base-url", "ftp://example.com"), "--judge-base-url"),
    (("--judge-model", ""), "--judge-model"),
])
def test_bad_input_is_one_paragraph_and_exit_2(proj: Proj, judges: Judges, sut: Loopback, args: tuple[str, ...],
                                                named: str):
    write_judged_project(proj, judges, sut, attempts=1)
    assert proj.run(env=ENV).returncode == 0
    runs = proj.sql("SELECT count(*) AS n FROM runs")[0]["n"]
    done = proj.cli("regrade", *args, env=ENV)
    assert done.returncode == 2, done.stdout + done.stderr
    assert named in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert proj.sql("SELECT count(*) AS n FROM runs")[0]["n"] == runs


def test_regrade_of_a_store_from_the_previous_schema_names_the_attempts_it_cannot_regrade(proj: Proj):
    _schema8_store(proj)
    old_run, old_attempts = latest_run(proj)["id"], [a["id"] for a in proj.sql("SELECT id FROM attempts")]
    done = proj.cli("regrade", env=ENV)
    assert done.returncode == 2, done.stdout + done.stderr
    assert all(a in done.stderr for a in old_attempts) and "--skip-missing" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    done = proj.cli("regrade", "--skip-missing", env=ENV)
    assert done.returncode == 2 and "no judge assertion to regrade" in done.stderr, done.stderr
    assert [r["id"] for r in proj.sql("SELECT id FROM runs")] == [old_run]  # nothing written


def test_skip_missing_regrades_the_attempts_that_have_inputs_and_leaves_the_others_out(
        proj: Proj, judges: Judges):
    _schema8_store(proj, attempts=3)
    done = proj.run()  # reuses the two old attempts (same fingerprint), executes the third
    assert done.returncode == 0, done.stdout + done.stderr  # no judge key yet: unavailable, recorded only
    mixed = str(latest_run(proj)["id"])
    slots = proj.sql("SELECT relation FROM run_slots WHERE run_id = ? ORDER BY ordinal", [mixed])
    assert [s["relation"] for s in slots] == ["reference", "reference", "origin"]
    env = {"JK_LATER": ENV["JK"]}
    refused = proj.cli("regrade", "--judge-base-url", judges.server.base_url, env=env)
    assert refused.returncode == 2 and "2 attempt(s)" in refused.stderr, refused.stderr
    done = proj.cli("regrade", "--judge-base-url", judges.server.base_url, "--skip-missing", env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    regrade = latest_run(proj)
    rows = proj.sql("SELECT ordinal, state, regraded_from FROM attempts WHERE run_id = ?", [regrade["id"]])
    assert [(r["ordinal"], r["state"]) for r in rows] == [(2, "passed")]
    assert judges.counts() == {"judge-a": 1}
    (result,) = proj.sql("SELECT r.state, r.measurement FROM assertion_results r JOIN attempts a "
                         "ON a.id = r.attempt_id WHERE a.run_id = ? AND r.label = 'capital'", [regrade["id"]])
    assert (result["state"], result["measurement"]) == ("measured", 1.0)


def test_a_regrade_of_a_regrade_points_at_the_attempts_that_ran(proj: Proj, judges: Judges, sut: Loopback):
    write_judged_project(proj, judges, sut, attempts=1)
    assert proj.run(env=ENV).returncode == 0
    original = str(latest_run(proj)["id"])
    assert proj.cli("regrade", "--judge-model", "judge-b", env=ENV).returncode == 1
    first = str(latest_run(proj)["id"])
    done = proj.cli("regrade", first, "--judge-model", "judge-a", env=ENV)
    assert done.returncode == 0, done.stdout + done.stderr  # judge-a again: passed, as the run did
    second = latest_run(proj)
    assert second["regrade_of"] == first
    (ran,) = proj.sql("SELECT id FROM attempts WHERE run_id = ?", [original])
    assert {r["regraded_from"] for r in proj.sql("SELECT regraded_from FROM attempts WHERE run_id = ?",
                                                 [second["id"]])} == {ran["id"]}
    assert judges.counts() == {"judge-a": 2 + 2, "judge-b": 2}
    assert len(sut.requests) == 1  # the one run, and nothing since


def test_the_calibration_gate_holds_back_a_regrading_judge_people_never_labelled(
        proj: Proj, judges: Judges, sut: Loopback):
    write_judged_project(proj, judges, sut, attempts=1, extra="min_human_kappa = 0.5\nmin_labels = 1")
    assert proj.run(env=ENV).returncode == 5  # judge-a has no labels yet: uncalibrated, undecided
    done = proj.cli("regrade", "--judge-model", "judge-b", "--json", env=ENV)
    assert done.returncode == 5, done.stdout + done.stderr
    events = [json.loads(line)["event"] for line in done.stdout.splitlines()]
    assert events[0] == "run.planned" and "attempt.sealed" in events
    rows = _rows(proj, str(latest_run(proj)["id"]))
    capital = next(r for r in rows if r["label"] == "capital")
    assert (capital["result"], capital["measurement"]) == ("unavailable", 0.0)
    assert "judge-uncalibrated" in str(capital["explanation"])
    assert judges.counts()["judge-b"] == 1  # graded, then held back (the original stopped after it: no `polite`)


def test_the_next_run_reuses_what_ran_never_a_regraded_attempt(proj: Proj, judges: Judges, sut: Loopback):
    write_judged_project(proj, judges, sut)
    assert proj.run(env=ENV).returncode == 0
    original = str(latest_run(proj)["id"])
    ran = {r["id"] for r in proj.sql("SELECT id FROM attempts WHERE run_id = ?", [original])}
    assert proj.cli("regrade", "--judge-model", "judge-b", env=ENV).returncode == 1
    asked = len(sut.requests)
    done = proj.run(env=ENV)  # the config still names judge-a: its results are reused as they were
    assert done.returncode == 0, done.stdout + done.stderr
    again = str(latest_run(proj)["id"])
    slots = proj.sql("SELECT relation, attempt_id FROM run_slots WHERE run_id = ?", [again])
    assert {s["relation"] for s in slots} == {"reference"} and {s["attempt_id"] for s in slots} == ran
    assert len(sut.requests) == asked and judges.counts() == {"judge-a": 4, "judge-b": 4}


def test_ctrl_c_keeps_what_was_regraded_and_marks_the_regrade_interrupted(
        proj: Proj, judges: Judges, sut: Loopback):
    write_judged_project(proj, judges, sut, attempts=6)
    assert proj.run(env=ENV).returncode == 0
    # The regrade's preflight and its first six grading requests are answered at once, then every
    # grading request hangs; the interrupt comes once six were regraded and one hangs.
    judges.server.enqueue(Reply.tool("Y", "preflight"), *[Reply.tool("Y", "graded")] * 6,
                          *[Reply.tool("Y", "slow", delay_s=10)] * 6)
    proc = proj.popen("regrade", "--judge-model", "judge-c", env=ENV)
    try:
        wait_for(lambda: judges.counts().get("judge-c", 0) >= 6 and judges.server.in_flight > 0, timeout=60)
        proc.send_signal(signal.SIGINT)
        asked = time.monotonic()
        _out, err = proc.communicate(timeout=60)
        took = time.monotonic() - asked
    finally:
        stop(proc)
    assert proc.returncode == 130, err
    assert took < 5, took  # the hanging judge requests are given up, not waited for
    run = latest_run(proj)
    assert (run["kind"], run["status"], run["exit_code"]) == ("regrade", "interrupted", 130), err
    assert "Traceback" not in err
