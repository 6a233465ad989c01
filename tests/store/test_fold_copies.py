"""A run whose slots are exactly an earlier folded run's stores that run's unit rows, copied; any
other run folds its own (store/unit_folds.py, `_same_slots_as`; issue 28 item 4).

A unit's row is a function of its slots (ordinal, pass rule, attempt), so the copy must be taken
only when every slot matches, key for key — held here over seeded stores of every shape of unit
(tests/support/unit_fold_store.py), each third run a copy of a donor's slots with or without one
difference: the stored rows are always the fold statements' own rows, value for value.
"""

from __future__ import annotations

import sqlite3
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from niceeval_cli._ids import new_id
from niceeval_cli._states import RunStatus
from niceeval_cli.store import Store
from niceeval_cli.store.schema import INSERT_SLOT
from niceeval_cli.store.unit_folds import _folded_units, _quoted, _stored_units
from tests.support import unit_fold_store

DIFFERENCES = ("none", "pass rule", "one slot fewer", "one slot more", "another attempt", "ordinal")


def _third_run(path: Path, donor: str, difference: str, pick: int) -> str:
    """A run of reference slots, the donor's slots but for `difference` (the `pick`-th slot's)."""
    run_id = new_id()
    with sqlite3.connect(path) as conn:
        slots = [list(row) for row in conn.execute(
            "SELECT experiment_id, eval_id, ordinal, attempt_id, pass_rule FROM run_slots WHERE run_id = ? "
            "ORDER BY experiment_id, eval_id, ordinal", [donor])]
        others = [row[0] for row in conn.execute(
            "SELECT id FROM attempts WHERE id NOT IN (SELECT attempt_id FROM run_slots WHERE run_id = ?) ORDER BY id",
            [donor])]
        chosen = slots[pick % len(slots)]
        if difference == "pass rule":
            chosen[4] = "0.25" if chosen[4] != "0.25" else "all"
        elif difference == "one slot fewer":
            slots.remove(chosen)
        elif difference == "one slot more":
            slots.append([chosen[0], chosen[1], 99, chosen[3], chosen[4]])
        elif difference == "another attempt" and others:
            chosen[3] = others[pick % len(others)]
        elif difference == "ordinal":
            chosen[2] = 98
        conn.execute(
            "INSERT INTO runs (id, started_at, ended_at, status, argv, niceeval_version, exit_code, config_file, "
            "experiments, owner_pid, owner_host) VALUES (?, '2025-01-02T00:00:00.000Z', NULL, 'running', "
            "'[\"run\"]', 'test', NULL, NULL, '[]', NULL, NULL)", [run_id])
        conn.executemany(INSERT_SLOT, [(run_id, e, v, o, a, "reference", "reused", rule) for e, v, o, a, rule in slots])
    return run_id


def _fold_statements_ran(path: Path, run_id: str) -> bool:
    """Finish the run through the store; whether the fold statements walked its slots."""
    ran: list[str] = []
    with Store.open(path) as store:
        store._db.conn.set_trace_callback(ran.append)
        store.finish_run(run_id, status=RunStatus.FINISHED, ended_at="2025-01-02T01:00:00.000Z", exit_code=0)
        store._db.conn.set_trace_callback(None)
    return any("GROUP BY s.experiment_id, s.eval_id" in s for s in ran)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), units=st.integers(1, 30), from_base=st.booleans(),
       difference=st.sampled_from(DIFFERENCES), pick=st.integers(0, 1_000))
def test_a_run_stores_the_rows_its_slots_fold_to_copied_or_not(
    seed: int, units: int, from_base: bool, difference: str, pick: int
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "results.db"
        base, new = unit_fold_store.build(path, seed=seed, units=units, finish="store")
        with sqlite3.connect(path) as conn:
            empty = {run for run, in conn.execute("SELECT id FROM runs WHERE id NOT IN (SELECT run_id FROM run_slots)")}
        from_base = (from_base or new in empty) and base not in empty  # a donor with slots
        third = _third_run(path, base if from_base else new, difference, pick)
        folded_on_finish = _fold_statements_ran(path, third)
        with Store.open(path, readonly=True) as store:
            stored = _stored_units(store._db, third)
            folded = _folded_units(store._db, _quoted([third]), 1)
        assert stored is not None
        assert stored == folded  # the very rows, value for value
        assert [type(v) for row in stored for v in row] == [type(v) for row in folded for v in row]
        if difference == "none" and from_base:
            assert not folded_on_finish  # the donor's rows, copied
        if difference in ("pass rule", "one slot fewer", "one slot more", "ordinal"):
            assert folded_on_finish  # no run has exactly these slots


def test_a_copy_is_taken_over_more_than_one_statement_and_a_run_with_an_executed_slot_folds(tmp_path: Path) -> None:
    import niceeval_cli.store.unit_folds as unit_folds

    path = tmp_path / "results.db"
    base, _new = unit_fold_store.build(path, seed=5, units=40, finish="store")
    copied = _third_run(path, base, "none", 0)
    saved, unit_folds._COPIED = unit_folds._COPIED, 7  # 40 units in statements of 7
    try:
        assert not _fold_statements_ran(path, copied)
    finally:
        unit_folds._COPIED = saved
    with Store.open(path, readonly=True) as store:
        assert _stored_units(store._db, copied) == _folded_units(store._db, _quoted([copied]), 1)
        assert _stored_units(store._db, copied) == _stored_units(store._db, base)


def test_a_donor_whose_rows_are_not_all_there_is_not_copied(tmp_path: Path) -> None:
    path = tmp_path / "results.db"
    base, _new = unit_fold_store.build(path, seed=6, units=20, finish="store")
    with sqlite3.connect(path) as conn:  # a tampered store: one of the donor's rows gone, its mark left
        conn.execute("DROP TRIGGER unit_folds_no_delete")
        conn.execute("DELETE FROM unit_folds WHERE rowid = (SELECT min(rowid) FROM unit_folds WHERE run_id = ?)",
                     [base])
    third = _third_run(path, base, "none", 0)
    assert _fold_statements_ran(path, third)
    with Store.open(path, readonly=True) as store:
        assert _stored_units(store._db, third) == _folded_units(store._db, _quoted([third]), 1)
