"""Sealing: an attempt, all its results and its slot are written together or not at all."""

from __future__ import annotations

import dataclasses
import sqlite3
import threading
import time

import pytest

from niceeval_cli._records import AssertionResult, AttemptRecord
from niceeval_cli._states import AssertionState, AttemptState, GateState, Relation, Role
from niceeval_cli.store import AssertionRow, AttemptRow, StoreError


def _counts(path) -> tuple[int, int, int]:
    with sqlite3.connect(path) as conn:
        return tuple(  # type: ignore[return-value]
            conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
            for t in ("attempts", "assertion_results", "run_slots")
        )


def test_a_sealed_attempt_reads_back_field_for_field(project):
    run_id = project.begin_run()
    attempt = project.attempt(
        run_id, state=AttemptState.SCORED, score=2.5, max_score=4.0, unavailable_weight=1.0,
        partial_score=2.5, gate=GateState.PASSED, input_tokens=12, output_tokens=7, judge_tokens=30,
    )
    results = [
        project.result(attempt, 0, AssertionState.BELOW, role=Role.GATE_SCORE, weight=2.0, contribution=0.0,
                       measurement=0.62, threshold=0.8, explanation="too vague", or_stop=True,
                       judge_audit='{"prompt": "…"}', judge_tokens=30, match_kind="score"),
        project.result(attempt, 1, AssertionState.UNAVAILABLE, reason="usage-unreported", evidence=None),
    ]
    project.store.seal_attempt(attempt, results, project.slot(attempt))

    row = project.store.resolve_attempt(attempt.id)
    assert isinstance(row, AttemptRow)
    fields = dataclasses.fields(AttemptRecord)
    assert AttemptRecord(**{f.name: getattr(row, f.name) for f in fields}) == attempt
    assert row.state is AttemptState.SCORED and row.gate is GateState.PASSED and row.origin_run_id == run_id

    rows = project.store.assertions_for_attempt(attempt.id)
    assert all(isinstance(r, AssertionRow) for r in rows)
    as_records = [AssertionResult(**{f.name: getattr(r, f.name) for f in dataclasses.fields(r)})
                  for r in rows]
    assert as_records == results
    assert rows[0].or_stop is True and rows[1].or_stop is False


def test_chinese_labels_and_ids_round_trip(project):
    run_id = project.begin_run(experiments=["模型/甲"])
    attempt = project.attempt(run_id, experiment_id="模型/甲", eval_id="退款/政策")
    label = "回答提到了退款政策 ✓"
    project.seal(attempt, results=[project.result(attempt, 0, label=label, explanation="说明：完整")])

    assert project.store.assertions_for_attempt(attempt.id)[0].label == label
    assert project.store.resolve_run(run_id).experiments == ("模型/甲",)
    _, rows = project.store.query("assertions", experiment="模型/甲", eval_prefix="退款/")
    got = [(r["label"], r["explanation"], r["experiment_id"]) for r in rows]
    assert got == [(label, "说明：完整", "模型/甲")]
    _, sql_rows = project.store.sql("SELECT label FROM assertion_results")
    assert sql_rows == [(label,)]


def test_a_failing_result_insert_leaves_no_part_of_the_attempt(project):
    run_id = project.begin_run()
    attempt = project.attempt(run_id)
    first = project.result(attempt, 0)
    duplicate = dataclasses.replace(project.result(attempt, 1), id=first.id)
    with pytest.raises(StoreError) as caught:
        project.store.seal_attempt(attempt, [first, duplicate], project.slot(attempt))
    assert attempt.id in str(caught.value) and str(project.path) in str(caught.value)
    assert _counts(project.path) == (0, 0, 0)
    # The store is still usable: the same attempt seals cleanly afterwards.
    project.seal(attempt, results=[first])
    assert _counts(project.path) == (1, 1, 1)


def test_sealing_twice_into_the_same_slot_is_refused_whole(project):
    run_id = project.begin_run()
    attempt = project.seal(project.attempt(run_id), ["matched"])
    again = project.attempt(run_id)  # same experiment, eval, ordinal: the slot is taken
    with pytest.raises(StoreError):
        project.seal(again, ["matched", "matched"])
    assert _counts(project.path) == (1, 1, 1)
    assert [a.id for a in project.store.attempts_for_run(run_id)] == [attempt.id]


def test_a_slot_that_does_not_describe_the_attempt_is_a_programming_error(project):
    run_id = project.begin_run()
    attempt = project.attempt(run_id)
    other = project.slot(project.attempt(run_id, eval_id="evals/other"))
    with pytest.raises(ValueError):
        project.store.seal_attempt(attempt, [], other)
    with pytest.raises(ValueError):
        reference = project.slot(attempt)._replace(relation=Relation.REFERENCE)
        project.store.seal_attempt(attempt, [], reference)
    assert _counts(project.path) == (0, 0, 0)


def test_a_read_only_store_refuses_to_seal(project):
    run_id = project.begin_run()
    attempt = project.attempt(run_id)
    with pytest.raises(StoreError, match="read-only"):
        project.reader().seal_attempt(attempt, [], project.slot(attempt))


def test_readers_are_not_blocked_by_a_writer_holding_its_transaction(project):
    run_id = project.begin_run()
    sealed = project.seal(project.attempt(run_id), ["matched"])
    writer = sqlite3.connect(project.path)
    writer.execute("BEGIN IMMEDIATE")  # the runner mid-seal: write lock held, rows not yet committed
    writer.execute("UPDATE runs SET status = 'interrupted'")
    try:
        started = time.monotonic()
        reader = project.reader()
        assert [a.id for a in reader.attempts_for_run(run_id)] == [sealed.id]
        assert reader.resolve_run(None).status == "running"  # the uncommitted change is not visible
        assert reader.query("assertions")[1][0]["attempt_id"] == sealed.id
        assert reader.sql("SELECT count(*) FROM attempts")[1] == [(1,)]
        assert time.monotonic() - started < 2  # no busy-wait either
    finally:
        writer.rollback()
        writer.close()


def test_readers_never_see_database_is_locked_while_a_run_is_sealing(project):
    run_id = project.begin_run()
    done = threading.Event()
    failures: list[BaseException] = []

    def write() -> None:
        try:
            for n in range(300):
                project.seal(project.attempt(run_id, eval_id=f"evals/{n:03d}"), ["matched"] * 5)
        except BaseException as error:  # pragma: no cover - reported below
            failures.append(error)
        finally:
            done.set()

    thread = threading.Thread(target=write)
    thread.start()
    seen = []
    while not done.is_set():
        reader = project.reader()
        seen.append(len(reader.query("attempts")[1]))
        reader.sql("SELECT count(*) FROM assertion_results")
        reader.close()
    thread.join()
    assert not failures
    assert seen == sorted(seen)  # each read sees a consistent, growing snapshot
    assert len(project.reader().query("attempts")[1]) == 300
