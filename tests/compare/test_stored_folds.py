"""A finished run's stored unit folds are the fold statements' own rows, and reading them runs
none of those statements (store/unit_folds.py; issue 25 item 8).

The statements walk every slot, attempt and result of a run (≈ 0.65 s of CPU for 100 000
attempts); a stored run's read is one lookup of its rows. Held here with SQLite's statement trace
and progress handler, and with hypothesis: over varied stores, the stored rows and the rows
folded on read are equal, and so are the `UnitFold`s built from them.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import tempfile
from dataclasses import fields
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from niceeval_cli._unit_folds import UnitFold
from niceeval_cli.store import Store
from niceeval_cli.store.db import Db
from niceeval_cli.store.unit_folds import _folded_units, _quoted, _stored_units, unit_folds
from tests.support import unit_fold_store


def _work(conn: sqlite3.Connection, run_id: str) -> tuple[list[str], int]:
    """The statements `unit_folds` ran for a run, and SQLite's work for them (progress ticks)."""
    statements: list[str] = []
    ticks = [0]

    def tick() -> int:
        ticks[0] += 1
        return 0

    conn.set_trace_callback(statements.append)
    conn.set_progress_handler(tick, 100)
    try:
        assert unit_folds(Db(conn, Path("results.db")), run_id) is not None
    finally:
        conn.set_trace_callback(None)
        conn.set_progress_handler(None, 0)
    return statements, ticks[0]


def test_a_stored_run_is_read_without_the_fold_statements(tmp_path: Path) -> None:
    stored, bare = tmp_path / "stored.db", tmp_path / "bare.db"
    base, _ = unit_fold_store.build(stored, seed=4, units=200, finish="store")
    bare_base, _ = unit_fold_store.build(bare, seed=4, units=200, finish="sql")
    with sqlite3.connect(stored) as conn:
        read, read_work = _work(conn, base)
    with sqlite3.connect(bare) as conn:
        folded, fold_work = _work(conn, bare_base)
    assert any("GROUP BY s.experiment_id, s.eval_id" in s for s in folded)  # on read: the walking statements
    # only lookups by key remain: the few units whose scores or keys are read one by one
    assert not any("GROUP BY" in s for s in read), read
    assert any("FROM unit_folds WHERE run_id" in s for s in read)
    assert read_work * 5 < fold_work, (read_work, fold_work)


def test_an_abandoned_run_recorded_interrupted_stores_its_folds(tmp_path: Path) -> None:
    path = tmp_path / "results.db"
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    _, new = unit_fold_store.build(path, seed=2, units=30, finish="running", owner_pid=int(gone.stdout))
    with Store.open(path) as store:
        assert store.record_abandoned() == [new]
        rows = _stored_units(store._db, new)
        assert rows is not None and rows == _folded_units(store._db, _quoted([new]), 1)
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT status FROM runs WHERE id = ?", [new]).fetchone() == ("interrupted",)


def _plain(folds: list[UnitFold] | None) -> list[dict[str, object]] | None:
    if folds is None:
        return None
    plain = []
    for fold in folds:
        found = {f.name: getattr(fold, f.name) for f in fields(fold)}
        found["key_states"] = list(fold.key_states.items())
        plain.append(found)
    return sorted(plain, key=repr)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), units=st.integers(1, 40), mixed=st.booleans())
def test_stored_folds_are_the_folds_on_read(seed: int, units: int, mixed: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        stored_path, bare_path = Path(tmp) / "stored.db", Path(tmp) / "bare.db"
        runs = unit_fold_store.build(stored_path, seed=seed, units=units, mixed=mixed, finish="store")
        bare_runs = unit_fold_store.build(bare_path, seed=seed, units=units, mixed=mixed, finish="sql")
        with Store.open(stored_path, readonly=True) as store, Store.open(bare_path, readonly=True) as bare:
            for run_id, bare_id in zip(runs, bare_runs, strict=True):
                stored = _stored_units(store._db, run_id)
                folded = _folded_units(store._db, _quoted([run_id]), 1)
                assert stored is not None and _stored_units(bare._db, bare_id) is None
                assert stored == folded  # the very rows, value for value
                assert [type(v) for row in stored for v in row] == [type(v) for row in folded for v in row]
                # the same store's rows finished without stored folds: the same UnitFolds, read on read
                assert _plain(store.unit_folds(run_id)) == _plain(bare.unit_folds(bare_id))
