"""Reading sealed results back: order (worst first), filters, id prefixes, reuse across runs."""

from __future__ import annotations

import pytest

from niceeval_cli._states import GateState, PlanReason, Relation
from niceeval_cli.store import SlotRecord, StoreError


@pytest.fixture
def mixed_run(project):
    """One run with every kind of outcome, sealed in an order unlike the reading order."""
    run_id = project.begin_run(experiments=["a", "b"])
    seal, attempt = project.seal, project.attempt
    seal(attempt(run_id, "a", "evals/pass_ok"), ["matched", "matched"])
    seal(attempt(run_id, "b", "evals/score_ok", state="scored", gate=GateState.PASSED), ["met", "measured"])
    seal(attempt(run_id, "a", "evals/wrong", state="failed"), ["matched", "unavailable", "mismatched"])
    seal(attempt(run_id, "b", "evals/score_gate", state="scored", gate=GateState.FAILED), ["met", "below"])
    seal(attempt(run_id, "b", "evals/score_unrankable", state="unrankable"), ["unavailable", "met"])
    seal(attempt(run_id, "a", "evals/broken", state="errored"), ["matched", "errored"])
    seal(attempt(run_id, "a", "evals/another", state="failed"), ["mismatched"])
    project.finish(run_id, exit_code=1)
    return run_id


ATTEMPT_ORDER = [
    ("a", "evals/broken", "errored"),
    ("a", "evals/another", "failed"),
    ("a", "evals/wrong", "failed"),
    ("b", "evals/score_unrankable", "unrankable"),
    ("b", "evals/score_gate", "scored"),  # gate failed
    ("a", "evals/pass_ok", "passed"),
    ("b", "evals/score_ok", "scored"),
]


def test_attempts_come_worst_first_then_by_experiment_eval_ordinal(project, mixed_run):
    rows = project.store.attempts_for_run(mixed_run)
    assert [(r.experiment_id, r.eval_id, r.state) for r in rows] == ATTEMPT_ORDER
    columns, dicts = project.store.query("attempts")
    assert [(d["experiment_id"], d["eval_id"], d["state"]) for d in dicts] == ATTEMPT_ORDER
    assert columns[:3] == ["id", "run_id", "experiment_id"] and columns[-1] == "relation"


def test_assertions_come_by_their_own_severity_across_attempts(project, mixed_run):
    _, rows = project.store.query("assertions")
    assert [(r["eval_id"], r["ordinal"], r["state"]) for r in rows] == [
        ("evals/broken", 1, "errored"),
        ("evals/another", 0, "mismatched"),
        ("evals/wrong", 2, "mismatched"),
        ("evals/score_gate", 1, "below"),
        ("evals/wrong", 1, "unavailable"),
        ("evals/score_unrankable", 0, "unavailable"),
        ("evals/broken", 0, "matched"),
        ("evals/wrong", 0, "matched"),
        ("evals/score_unrankable", 1, "met"),
        ("evals/score_gate", 0, "met"),
        ("evals/pass_ok", 0, "matched"),
        ("evals/pass_ok", 1, "matched"),
        ("evals/score_ok", 0, "met"),
        ("evals/score_ok", 1, "measured"),
    ]
    assert {r["run_id"] for r in rows} == {mixed_run}
    assert rows[0]["attempt_ordinal"] == 0 and rows[0]["experiment_id"] == "a"


def test_one_attempts_results_come_worst_first_then_in_registration_order(project, mixed_run):
    (wrong,) = project.store.attempts_for_run(mixed_run, eval_prefix="evals/wrong")
    rows = project.store.assertions_for_attempt(wrong.id)
    assert [(r.ordinal, r.state) for r in rows] == [(2, "mismatched"), (1, "unavailable"), (0, "matched")]


def test_failed_is_shorthand_for_mismatched_and_below(project, mixed_run):
    _, rows = project.store.query("assertions", states=["failed"])
    assert [(r["eval_id"], r["state"]) for r in rows] == [
        ("evals/another", "mismatched"), ("evals/wrong", "mismatched"), ("evals/score_gate", "below"),
    ]
    _, worst = project.store.query("assertions", states=["failed", "errored"], limit=2)
    assert [r["state"] for r in worst] == ["errored", "mismatched"]


def test_attempt_state_filters_include_gate_failed(project, mixed_run):
    def evals(**kw):
        return [r.eval_id for r in project.store.attempts_for_run(mixed_run, **kw)]

    assert evals(states=["failed"]) == ["evals/another", "evals/wrong"]
    assert evals(states=["gate-failed"]) == ["evals/score_gate"]
    assert evals(states=["scored"]) == ["evals/score_gate", "evals/score_ok"]
    assert evals(states="errored") == ["evals/broken"]


def test_unknown_states_are_a_clear_error(project, mixed_run):
    with pytest.raises(StoreError, match="Unknown attempt state 'broken'"):
        project.store.attempts_for_run(mixed_run, states=["broken"])
    with pytest.raises(StoreError, match="choose from"):
        project.store.query("assertions", states=["passed"])


def test_experiment_eval_prefix_and_limit_filters(project, mixed_run):
    def evals(**kw):
        return [r["eval_id"] for r in project.store.query("attempts", **kw)[1]]

    assert evals(experiment="b") == ["evals/score_unrankable", "evals/score_gate", "evals/score_ok"]
    scores = ["evals/score_unrankable", "evals/score_gate", "evals/score_ok"]
    assert evals(eval_prefix="evals/score_") == scores
    assert evals(eval_prefix="evals/score%") == []  # a prefix, not a LIKE pattern
    assert evals(experiment="a", limit=2) == ["evals/broken", "evals/another"]
    assert evals(experiment=["a", "b"], eval_prefix=["evals/pass", "evals/score_ok"]) == [
        "evals/pass_ok", "evals/score_ok",
    ]


def test_an_experiment_group_prefix_selects_the_group(project):
    run_id = project.begin_run(experiments=["models/x", "models/y", "modelsz"])
    for experiment in ("models/x", "models/y", "modelsz"):
        project.seal(project.attempt(run_id, experiment), ["matched"])
    rows = project.store.attempts_for_run(run_id, experiment="models/")
    assert sorted(r.experiment_id for r in rows) == ["models/x", "models/y"]
    _, runs = project.store.query("runs", experiment="models/x")
    assert [r["id"] for r in runs] == [run_id]


def test_reused_attempts_show_under_the_new_run_as_references(project):
    first = project.begin_run()
    kept = project.seal(project.attempt(first, eval_id="evals/kept"), ["matched", "mismatched"])
    project.seal(project.attempt(first, eval_id="evals/redone", state="errored"), ["errored"])
    project.finish(first)

    second = project.begin_run()
    project.store.add_reference_slots([
        SlotRecord(second, kept.experiment_id, kept.eval_id, kept.ordinal, kept.id, Relation.REFERENCE,
                   PlanReason.REUSED),
    ])
    redone = project.seal(
        project.attempt(second, eval_id="evals/redone"), ["matched"],
    )

    rows = project.store.attempts_for_run(second)
    assert [(r.id, r.relation, r.origin_run_id) for r in rows] == [
        (kept.id, Relation.REFERENCE, first),
        (redone.id, Relation.ORIGIN, second),
    ]
    assert rows[0].plan_reason is PlanReason.REUSED
    _, dicts = project.store.query("attempts", run=second)
    assert [(d["id"], d["relation"], d["run_id"]) for d in dicts] == [
        (kept.id, "reference", first), (redone.id, "origin", second),
    ]
    _, results = project.store.query("assertions", run=second, states=["failed"])
    assert [(r["attempt_id"], r["run_id"], r["relation"]) for r in results] == [(kept.id, first, "reference")]
    slots = project.store.run_slots(second)
    assert [(s.eval_id, s.relation, s.attempt_id) for s in slots] == [
        ("evals/kept", Relation.REFERENCE, kept.id), ("evals/redone", Relation.ORIGIN, redone.id),
    ]
    # The first run still lists only what it made itself.
    assert {r.relation for r in project.store.attempts_for_run(first)} == {Relation.ORIGIN}


def test_query_all_runs_lists_each_sealed_attempt_once(project):
    first = project.begin_run()
    kept = project.seal(project.attempt(first), ["matched"])
    second = project.begin_run()
    project.store.add_reference_slots([
        SlotRecord(second, kept.experiment_id, kept.eval_id, 0, kept.id, Relation.REFERENCE,
                   PlanReason.REUSED)
    ])
    project.seal(project.attempt(second, eval_id="evals/b"), ["matched"])
    _, rows = project.store.query("attempts", run="all")
    assert sorted((r["eval_id"], r["run_id"], r["relation"]) for r in rows) == [
        ("evals/a", first, "origin"), ("evals/b", second, "origin"),
    ]


def test_latest_attempts_are_the_last_sealed_of_each_slot(project):
    first = project.begin_run()
    project.seal(project.attempt(first), ["matched"])
    older_ordinal_1 = project.seal(project.attempt(first, ordinal=1), ["matched"])
    second = project.begin_run()
    newer = project.seal(project.attempt(second, state="failed"), ["mismatched"])

    latest = project.store.latest_attempts("exp")
    assert set(latest) == {("evals/a", 0), ("evals/a", 1)}
    assert latest[("evals/a", 0)].id == newer.id and latest[("evals/a", 0)].state == "failed"
    assert latest[("evals/a", 1)].id == older_ordinal_1.id
    assert project.store.latest_attempts("other") == {}
    b = project.seal(project.attempt(second, eval_id="evals/b"), ["matched"])
    assert set(project.store.latest_attempts("exp", ["evals/b"])) == {("evals/b", 0)}
    assert project.store.latest_attempts("exp", ["evals/b"])[("evals/b", 0)].id == b.id
    assert set(project.store.latest_attempts("exp", ["evals/a", "evals/zzz"])) == {("evals/a", 0), ("evals/a", 1)}
    assert project.store.latest_attempts("exp", []) == {}


def test_the_latest_attempt_is_the_last_to_end_then_the_greatest_id(project):
    same_end, later_end = "2025-06-01T00:00:00.000Z", "2025-06-02T00:00:00.000Z"
    # Sealed (one run each) in an order that neither the ids nor the end times follow.
    for ordinal, attempt_id, ended_at in ((0, "01J00000000000000000000019", same_end),
                                          (0, "01J00000000000000000000011", same_end),
                                          (1, "01J00000000000000000000021", later_end),
                                          (1, "01J00000000000000000000029", same_end)):
        project.seal(project.attempt(project.begin_run(), ordinal=ordinal, id=attempt_id, ended_at=ended_at))

    latest = project.store.latest_attempts("exp")
    assert latest[("evals/a", 0)].id == "01J00000000000000000000019"  # equal end times: the greatest id
    assert latest[("evals/a", 1)].id == "01J00000000000000000000021"  # else the one that ended last
    assert (latest[("evals/a", 1)].eval_id, latest[("evals/a", 1)].ordinal) == ("evals/a", 1)


def test_runs_are_listed_newest_first_and_the_latest_is_the_default(project):
    first, second = project.begin_run(), project.begin_run()
    project.finish(first)
    assert project.store.latest_run_id() == second
    assert project.store.resolve_run(None).id == second
    _, rows = project.store.query("runs")
    assert [r["id"] for r in rows] == [second, first]
    assert rows[1]["status"] == "finished" and rows[0]["status"] == "running"
    _, finished = project.store.query("runs", states=["finished"])
    assert [r["id"] for r in finished] == [first]
    run = project.store.resolve_run(first)
    assert run.argv == ("niceeval", "run") and run.experiments == ("exp",)


def test_an_empty_store_has_no_latest_run(project):
    assert project.store.latest_run_id() is None
    with pytest.raises(StoreError, match="No runs yet"):
        project.store.resolve_run(None)
    with pytest.raises(StoreError, match="No runs yet"):
        project.store.query("assertions")


class TestIdPrefixes:
    def test_a_unique_prefix_resolves_with_or_without_at_and_in_any_case(self, project):
        run_id = project.begin_run()
        attempt = project.seal(project.attempt(run_id), ["matched"])
        for ref in (attempt.id, attempt.id[:-2], "@" + attempt.id[:-2], attempt.id[:-2].lower()):
            assert project.store.resolve_attempt(ref).id == attempt.id
        assert project.store.resolve_run(run_id[:-3].lower()).id == run_id

    def test_an_ambiguous_prefix_lists_candidates(self, project):
        run_id = project.begin_run()
        one = project.seal(project.attempt(run_id, eval_id="evals/1"), ["matched"])
        two = project.seal(project.attempt(run_id, eval_id="evals/2"), ["matched"])
        common = 0
        while one.id[common] == two.id[common]:
            common += 1
        with pytest.raises(StoreError, match="ambiguous") as caught:
            project.store.resolve_attempt("@" + one.id[:common])
        assert one.id in str(caught.value) and two.id in str(caught.value)

    def test_an_unknown_id_is_named(self, project):
        project.begin_run()
        with pytest.raises(StoreError, match="No attempt with id 'ZZZZ'"):
            project.store.resolve_attempt("@ZZZZ")
        with pytest.raises(StoreError, match="No run with id 'ZZZZ'"):
            project.store.query("attempts", run="ZZZZ")
        with pytest.raises(StoreError, match="Give the attempt id"):
            project.store.resolve_attempt("@")
