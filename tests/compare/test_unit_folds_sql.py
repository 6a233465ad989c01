"""The store's SQL folds of a run's units (`Store.unit_folds`) are the Python folds of its attempts.

`compare BASE NEW` pairs the folds the store adds up in SQL (issue 25 item 8: two runs of
100 000 attempts in ≤ 1.5 s); `compare --experiments`, the report and any unit the store cannot
fold by counts still fold attempts in Python (`_unit_folds.unit_fold`). On seeded stores with
every shape of unit (tests/support/unit_fold_store.py) the two give the same units, and
`compare_runs` the same comparison as comparing the attempts.
"""

from __future__ import annotations

import sqlite3
from dataclasses import fields
from pathlib import Path

import pytest

import niceeval_cli.store.unit_folds as unit_folds_module
from niceeval_cli._unit_folds import UnitFold, unit_fold
from niceeval_cli.app.compare import attempt_facts, compare_runs
from niceeval_cli.comparison import compare
from niceeval_cli.outcomes import attempt_severity
from niceeval_cli.store import Store
from niceeval_cli.store.db import Db
from niceeval_cli.store.unit_folds import unit_folds
from tests.support import unit_fold_store
from tests.support.components import need_sqlite

SEEDS = range(12)


def _plain(fold: UnitFold) -> dict[str, object]:
    """A fold's fields, its key states as (key, states) items in their order."""
    found = {f.name: getattr(fold, f.name) for f in fields(fold)}
    found["key_states"] = list(fold.key_states.items())
    return found


def _python_folds(store: Store, run_id: str) -> dict[tuple[str, str], dict[str, object]]:
    """Each (experiment, eval id)'s attempts folded in Python, with where it is first seen."""
    groups: dict[tuple[str, str], list] = {}
    for facts in attempt_facts(store, store.resolve_run(run_id)):
        groups.setdefault((facts.experiment_id, facts.eval_id), []).append(facts)
    folds = {}
    for unit, attempts in groups.items():
        attempts.sort(key=lambda a: a.ordinal)
        fold = _plain(unit_fold(attempts))
        fold["first_seen"] = min((attempt_severity(a.state, a.gate), a.experiment_id, a.eval_id, a.ordinal)
                                 for a in attempts)
        folds[unit] = fold
    return folds


@pytest.mark.parametrize("seed", SEEDS)
def test_the_sql_folds_are_the_python_folds(tmp_path: Path, seed: int) -> None:
    path = tmp_path / "results.db"
    runs = unit_fold_store.build(path, seed=seed)
    with Store.open(path, readonly=True) as store:
        for run_id in runs:
            folds = store.unit_folds(run_id)
            assert folds is not None
            found = {(f.experiment_id, f.eval_id): _plain(f) for f in folds}
            expected = _python_folds(store, run_id)
            assert found.keys() == expected.keys()
            for unit, fold in expected.items():
                assert found[unit] == fold, unit


@pytest.mark.parametrize("seed", SEEDS)
def test_compare_runs_is_comparing_the_attempts(tmp_path: Path, seed: int) -> None:
    path = tmp_path / "results.db"
    base, new = unit_fold_store.build(path, seed=seed)
    with Store.open(path, readonly=True) as store:
        folded = compare_runs(store, base, new).comparison
        attempts = compare(attempt_facts(store, store.resolve_run(base)),
                           attempt_facts(store, store.resolve_run(new)))
    assert [p.row() for p in folded.pairs] == [p.row() for p in attempts.pairs]
    assert [c.row() for c in folded.experiments] == [c.row() for c in attempts.experiments]
    assert any(p.changed_keys for p in attempts.pairs)  # the stores do tell keys apart


def test_a_unit_whose_attempts_differ_in_identity_is_compared_from_its_attempts(tmp_path: Path) -> None:
    path = tmp_path / "results.db"
    base, new = unit_fold_store.build(path, seed=3, mixed=True)
    with Store.open(path, readonly=True) as store:
        assert store.unit_folds(base) is None  # not told by counts
        folded = compare_runs(store, base, new).comparison
        attempts = compare(attempt_facts(store, store.resolve_run(base)),
                           attempt_facts(store, store.resolve_run(new)))
    assert [p.row() for p in folded.pairs] == [p.row() for p in attempts.pairs]


def _work(conn: sqlite3.Connection, sql: str) -> tuple[int, int, int]:
    """SQLite's work (virtual-machine steps, in hundreds) computing a statement's first row
    (`execute`, which steps once) and reading the rest (`fetchall`), and how many rows it gave."""
    counted = [0]

    def count() -> int:
        counted[0] += 1
        return 0  # go on

    conn.set_progress_handler(count, 100)
    try:
        cursor = conn.execute(sql)
        first, counted[0] = counted[0], 0
        rows = cursor.fetchall()
        return first, counted[0], len(rows)
    finally:
        conn.set_progress_handler(None, 0)


def test_every_fold_statement_is_computed_before_its_first_row(tmp_path: Path) -> None:
    """The sqlite3 module releases the GIL for each step of a statement and takes it back for each
    row; a statement handing out its units one step at a time stalls while another thread holds
    the GIL (compare imports scipy meanwhile), so each statement the folds run must do its work
    within its first step and leave only reading the rows for later."""
    need_sqlite((3, 35, 0))  # MATERIALIZED CTEs
    path = tmp_path / "results.db"
    base, _ = unit_fold_store.build(path, seed=5, units=400)
    conn = sqlite3.connect(path)
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    assert unit_folds(Db(conn, path), base) is not None
    conn.set_trace_callback(None)
    folding = [sql for sql in statements if sql.lstrip().upper().startswith(("SELECT", "WITH"))
               and "run_slots" in sql]
    assert len(folding) >= 3, statements
    for sql in folding:
        computing, reading, rows = _work(conn, sql)
        assert rows > 20, sql
        assert reading * 2 < computing, (computing, reading, sql)
    # the check can fail: the same statement unwrapped does its work while its rows are read
    unwrapped = folding[0].split("AS MATERIALIZED (", 1)[1].rsplit(") SELECT * FROM", 1)[0]
    computing, reading, _ = _work(conn, unwrapped)
    assert reading > computing * 4
    conn.close()


def test_an_sqlite_without_materialized_ctes_folds_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`AS MATERIALIZED` needs SQLite 3.35: an older library computes the same statements step by step."""
    path = tmp_path / "results.db"
    base, new = unit_fold_store.build(path, seed=7)
    with Store.open(path, readonly=True) as store:
        computed_whole = compare_runs(store, base, new).comparison
    monkeypatch.setattr(unit_folds_module, "_MATERIALIZED_SINCE", (9999, 0, 0))
    conn = sqlite3.connect(path)
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    assert unit_folds(Db(conn, path), base) is not None
    conn.close()
    assert statements and not any("MATERIALIZED" in sql for sql in statements)
    with Store.open(path, readonly=True) as store:
        step_by_step = compare_runs(store, base, new).comparison
    assert [p.row() for p in step_by_step.pairs] == [p.row() for p in computed_whole.pairs]
    assert [c.row() for c in step_by_step.experiments] == [c.row() for c in computed_whole.experiments]
