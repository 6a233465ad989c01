"""Text SQLite cannot encode and integers it cannot hold never abort a seal (issue 9.1, 9.2).

A lone surrogate anywhere becomes U+FFFD; an integer outside int64 becomes NULL (unreported);
each change is a sentence in the attempt's `notes` (a JSON list); the other attempts seal as usual.
"""

from __future__ import annotations

import json
import sqlite3

from niceeval_cli._records import EventRecord, TurnRecord

LONE = "lone \ud800 and \udfff"
CLEAN = "lone \ufffd and \ufffd"


def test_lone_surrogates_in_every_sealed_text_are_replaced_and_noted(project):
    run_id = project.begin_run()
    attempt = project.attempt(run_id, state="errored", error=LONE, eval_id="evals/\ud83d",
                              notes=json.dumps(["adapter said hi"]))
    turn = TurnRecord(attempt.id, "s\ud800", 0, LONE, LONE, "completed", '["messages"]', data='{"x": "\ud800"}',
                      events=(EventRecord(attempt.id, 0, 0, "message", name=LONE, text=LONE),))
    attempt = project.attempt(run_id, state="errored", error=LONE, eval_id="evals/\ud83d", id=attempt.id,
                              notes=json.dumps(["adapter said hi"]), turns=(turn,))
    evidence = json.dumps({"actual": "\ud800"}, ensure_ascii=False)
    result = project.result(attempt, 0, "errored", explanation=LONE, evidence=evidence)
    project.seal(attempt, results=[result])
    other = project.seal(project.attempt(run_id, eval_id="evals/next"), ["matched"])

    (row,) = project.store.attempts_for_run(run_id, eval_prefix="evals/\ufffd")
    assert (row.error, row.eval_id) == (CLEAN, "evals/\ufffd")
    (stored,) = project.store.assertions_for_attempt(row.id)
    assert stored.explanation == CLEAN and json.loads(stored.evidence or "")["actual"] == "\ufffd"
    (stored_turn,) = project.store.turns(row.id)
    assert (stored_turn.session, stored_turn.message, stored_turn.events[0].text) == ("s\ufffd", CLEAN, CLEAN)
    notes = json.loads(row.notes or "")
    assert notes[0] == "adapter said hi"  # what the runner noted is kept, the store's notes follow
    noted = " ".join(notes[1:])
    for where in ("attempts.error", "attempts.eval_id", "assertion_results[0].explanation",
                  "assertion_results[0].evidence", "turns[0].message", "turns[0].data", "events[0].text"):
        assert where in noted
    assert "2 code point(s)" in noted and "U+FFFD" in noted
    assert {s.attempt_id for s in project.store.run_slots(run_id)} == {row.id, other.id}
    assert project.store.resolve_attempt(other.id).notes is None  # a clean attempt gets no notes


def test_integers_outside_int64_are_stored_as_unreported_and_noted(project):
    run_id = project.begin_run()
    base = project.attempt(run_id)
    turn = TurnRecord(base.id, "s", 0, "hi", "ok", "completed", "[]", input_tokens=-(10**30), output_tokens=5)
    attempt = project.attempt(run_id, id=base.id, input_tokens=10**30, output_tokens=7, judge_tokens=2**64,
                              turns=(turn,))
    result = project.result(attempt, 0, judge_tokens=10**19, source_line=10**40)
    project.seal(attempt, results=[result])

    row = project.store.resolve_attempt(attempt.id)
    assert (row.input_tokens, row.output_tokens, row.judge_tokens) == (None, 7, 0)  # judge_tokens is NOT NULL
    (stored,) = project.store.assertions_for_attempt(attempt.id)
    assert (stored.judge_tokens, stored.source_line) == (None, None)
    assert project.store.turns(attempt.id)[0].input_tokens is None
    notes = " ".join(json.loads(row.notes or ""))
    assert f"attempts.input_tokens: {10**30} is outside SQLite's 64-bit integer range; stored as NULL" in notes
    assert "attempts.judge_tokens" in notes and "stored as 0" in notes
    assert "assertion_results[0].judge_tokens" in notes and "turns[0].input_tokens" in notes
    with sqlite3.connect(project.path) as conn:  # the extremes that fit are kept exactly
        assert conn.execute("SELECT count(*) FROM attempts").fetchone()[0] == 1


def test_the_int64_extremes_are_kept_exactly(project):
    run_id = project.begin_run()
    attempt = project.seal(project.attempt(run_id, input_tokens=2**63 - 1, output_tokens=-(2**63)))
    row = project.store.resolve_attempt(attempt.id)
    assert (row.input_tokens, row.output_tokens, row.notes) == (2**63 - 1, -(2**63), None)


def test_lone_surrogates_in_a_runs_reference_slots_and_plan_are_stored_replaced(project):
    from niceeval_cli._ids import new_id
    from niceeval_cli._states import PlanReason, Relation
    from niceeval_cli.store import PlanSlot, SlotRecord

    first = project.begin_run()
    earlier = project.seal(project.attempt(first, eval_id="evals/\ud800x"), ["matched"])
    run_id = new_id()
    project.store.begin_run(
        run_id, started_at="2026-01-01T00:00:00Z", argv=["niceeval", "run"], version="0.1.0",
        config_file=None, experiments=["exp"], planned_total=2,
        reference_slots=[SlotRecord(run_id, "exp", "evals/\ud800x", 0, earlier.id, Relation.REFERENCE,
                                    PlanReason.REUSED, "all")],
        plan=[PlanSlot("exp", "evals/\ud800x", 0), PlanSlot("exp", "evals/plain", 0)],
    )
    with sqlite3.connect(project.store.path) as conn:
        slots = conn.execute("SELECT eval_id, relation FROM run_slots WHERE run_id = ?", [run_id]).fetchall()
        plan = conn.execute("SELECT eval_id FROM run_plan WHERE run_id = ? ORDER BY eval_id", [run_id]).fetchall()
    assert slots == [("evals/\ufffdx", "reference")]
    assert plan == [("evals/plain",), ("evals/\ufffdx",)]
