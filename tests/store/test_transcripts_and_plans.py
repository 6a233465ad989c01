"""Turns, events, plans and outcome rows: sealed with the attempt, read back through Store only."""

from __future__ import annotations

import pytest

from niceeval_cli._records import EventRecord, TurnRecord
from niceeval_cli._states import AttemptState, EvalKind, Relation
from niceeval_cli.store import OutcomeGroup, PlanSlot, StoreError


def _transcript(attempt_id: str, turns: int = 2) -> tuple[TurnRecord, ...]:
    return tuple(
        TurnRecord(attempt_id, f"s{t % 2}", t, f"in {t}", f"out {t}", "completed", '["messages", "tool_calls"]',
                   input_tokens=3, output_tokens=4, cost_usd=0.01, elapsed_ms=5.0, data='{"k": 1}',
                   events=tuple(EventRecord(attempt_id, t, s, "tool_call" if s else "message", name=f"tool{s}",
                                            input='{"q": 1}', output='"ok"', status="ok") for s in range(3)))
        for t in range(turns)
    )


def test_turns_and_events_are_sealed_with_the_attempt_and_read_back(project):
    run_id = project.begin_run()
    base = project.attempt(run_id)
    turns = _transcript(base.id)
    attempt = project.seal(project.attempt(run_id, id=base.id, turns=turns, case_id="c1", case_value='{"n": 1}',
                                           cost_usd=0.02, sandbox='{"kind": "docker"}', traceback="tb"))
    assert tuple(project.reader().turns(attempt.id)) == turns
    assert [(e.turn_ordinal, e.seq) for e in project.store.events(attempt.id)] == [
        (0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]
    row = project.store.resolve_attempt(attempt.id)
    assert (row.case_id, row.case_value, row.cost_usd, row.sandbox, row.traceback) == (
        "c1", '{"n": 1}', 0.02, '{"kind": "docker"}', "tb")


def test_a_seal_whose_transcript_cannot_be_written_writes_nothing(project):
    run_id = project.begin_run()
    base = project.attempt(run_id)
    twice = (TurnRecord(base.id, "s", 0, None, None, "completed", "[]"),) * 2  # the same turn key twice
    with pytest.raises(StoreError):
        project.seal(project.attempt(run_id, id=base.id, turns=twice), ["matched"])
    assert project.store.attempts_for_run(run_id) == [] and project.store.run_slots(run_id) == []


def test_turns_of_another_attempt_are_refused(project):
    run_id = project.begin_run()
    attempt = project.attempt(run_id, turns=_transcript("SOMEONE-ELSE", 1))
    with pytest.raises(ValueError, match="does not belong"):
        project.seal(attempt)


def test_query_turns_and_events_follow_attempt_severity_then_transcript_order(project):
    run_id = project.begin_run()
    passed = project.attempt(run_id, eval_id="evals/a")
    failed = project.attempt(run_id, eval_id="evals/b", state="failed")
    project.seal(project.attempt(run_id, eval_id="evals/a", id=passed.id, turns=_transcript(passed.id)))
    project.seal(project.attempt(run_id, eval_id="evals/b", state="failed", id=failed.id,
                                 turns=_transcript(failed.id)), ["mismatched"])
    columns, turns = project.store.query("turns")
    assert columns[:3] == ["attempt_id", "session", "ordinal"] and "relation" in columns
    assert [(t["eval_id"], t["ordinal"]) for t in turns] == [
        ("evals/b", 0), ("evals/b", 1), ("evals/a", 0), ("evals/a", 1)]
    _, events = project.store.query("events", states="failed", limit=4)
    assert [(e["attempt_id"], e["turn_ordinal"], e["seq"]) for e in events] == [
        (failed.id, 0, 0), (failed.id, 0, 1), (failed.id, 0, 2), (failed.id, 1, 0)]
    assert project.store.query("events", eval_prefix="evals/zzz")[1] == []


def test_a_runs_plan_names_the_slots_that_never_ran(project):
    run_id = project.begin_run()
    project.store.record_plan(run_id, [PlanSlot("exp", "evals/a", 0), PlanSlot("exp", "evals/a", 1, "case-2"),
                                       ("exp", "evals/b", 0)])
    project.seal(project.attempt(run_id, eval_id="evals/a"))
    assert project.store.not_run(run_id) == [PlanSlot("exp", "evals/a", 1, "case-2"), PlanSlot("exp", "evals/b", 0)]
    assert len(project.store.run_plan(run_id)) == 3
    assert project.store.resolve_run(run_id).not_run == 2
    assert [r["not_run"] for r in project.store.query("runs")[1]] == [2]
    other = project.begin_run()
    assert project.store.resolve_run(other).not_run is None  # no plan recorded: unknown, not 0
    with pytest.raises(StoreError, match="insert-only"):
        project.store.record_plan(run_id, [("exp", "evals/a", 0)])  # a plan is written once


def test_begin_run_records_shards_budget_and_executor(project):
    project.store.begin_run("R1", started_at="2030-01-01T00:00:00.000Z", argv=[], version="0.1", config_file=None,
                            experiments=["exp"], planned_total=8, shard_index=2, shard_count=4, group_id="g",
                            plan_digest="sha256:ab", executor="ray", budget_usd=1.5,
                            plan=[("exp", f"evals/{n}", 0) for n in range(8)])
    run = project.store.resolve_run("R1")
    assert (run.planned_total, run.shard_index, run.shard_count, run.group_id, run.plan_digest, run.executor,
            run.budget_usd) == (8, 2, 4, "g", "sha256:ab", "ray", 1.5)
    # A shard run's not-run slots are its own shard's (scale.md); the other shards' are the group's.
    from niceeval_cli._shards import shard_of

    assert len(project.store.not_run("R1")) == sum(shard_of("exp", f"evals/{n}", 0, 4) == 2 for n in range(8))
    assert len(project.store.not_run("g")) == 8


def test_outcome_rows_group_the_attempts_of_one_or_several_runs_by_case(project):
    first = project.begin_run()
    for ordinal, case in enumerate(("c1", "c1", "c2")):
        state = "failed" if case == "c2" else "passed"
        project.seal(project.attempt(first, case_id=case, ordinal=ordinal, state=state))
    second = project.begin_run()
    project.seal(project.attempt(second, eval_id="evals/other"))
    rows = sorted(project.store.outcome_rows(first), key=lambda r: (r.case_id or "", r.state))
    assert [(r.case_id, r.state, r.total) for r in rows] == [("c1", "passed", 2), ("c2", "failed", 1)]
    assert isinstance(rows[0], OutcomeGroup) and rows[0].kind is EvalKind.PASS
    assert rows[0].relation is Relation.ORIGIN and rows[0].state is AttemptState.PASSED
    both = project.store.outcome_rows([first, second])
    assert sum(r.total for r in both) == 4 and {r.eval_id for r in both} == {"evals/a", "evals/other"}
    assert project.store.outcome_rows([]) == []


@pytest.mark.parametrize("planned", [1, 100, 250])  # under, at and over one statement's 100 rows
def test_begin_run_writes_every_reference_slot_and_plan_row_in_order_or_none(project, planned):
    from niceeval_cli._states import PlanReason
    from niceeval_cli.store import SlotRecord

    earlier = project.begin_run()
    sealed = [project.seal(project.attempt(earlier, eval_id=f"evals/{n:03d}")) for n in range(planned)]
    project.finish(earlier)
    slots = [SlotRecord("R2", "exp", a.eval_id, 0, a.id, Relation.REFERENCE, PlanReason.REUSED, "all") for a in sealed]
    plan = [PlanSlot("exp", f"evals/new-{n:03d}", n % 3, f"c{n}" if n % 2 else None) for n in range(planned)]
    project.store.begin_run("R2", started_at="2030-01-01T00:00:00.000Z", argv=[], version="0.1", config_file=None,
                            experiments=["exp"], planned_total=2 * planned, reference_slots=slots, plan=plan)
    assert [r for r in project.store.run_plan("R2") if r.eval_id.startswith("evals/new-")] == plan
    assert project.store.not_run("R2") == plan
    assert [(a.eval_id, a.relation) for a in project.store.attempts_for_run("R2")] == sorted(
        (a.eval_id, Relation.REFERENCE) for a in sealed)
    # A refused row anywhere (here the last plan row repeats the first) leaves no trace of the run.
    with pytest.raises(StoreError):
        project.store.begin_run("R3", started_at="2030-01-01T00:00:00.000Z", argv=[], version="0.1",
                                config_file=None, experiments=["exp"], planned_total=planned + 1,
                                reference_slots=[s._replace(run_id="R3") for s in slots], plan=[*plan, plan[0]])
    with pytest.raises(StoreError):
        project.store.resolve_run("R3")
