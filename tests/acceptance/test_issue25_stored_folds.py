"""Issue 25, item 8: a finished run's unit folds are stored once, and `compare` reads them.

`compare A B` of two runs of 100 000 attempts must take ≤ 1.5 s; walking every attempt and
result on each read cost ≈ 0.65 s of CPU a run. A sealed run never changes, so the store folds
its units once, in the transaction that gives it its final status (`run`, `regrade`, `merge`, an
abandoned run recorded `interrupted`), into table `unit_folds` — the fold statements' own rows —
and `compare` reads those. What a user sees must not change: a run folded on read (still
running, finished before schema 10, a shard group) and the same run read from its stored folds
print the same comparison. Stored rows are read with sqlite3.
"""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from niceeval_cli._states import RunStatus
from niceeval_cli.store import SCHEMA_VERSION, Store
from niceeval_cli.store.connect import write_transaction
from niceeval_cli.store.unit_folds import FOLD_FORMAT, store_unit_folds
from tests.support import unit_fold_store
from tests.support.judged_project import (
    ENV,
    Judges,
    answering_sut,
    latest_run,
    running_judges,
    write_judged_project,
)
from tests.support.loopback import Loopback
from tests.support.pattern_app import run_with_passes, write_pattern_project
from tests.support.project import Project


@pytest.fixture
def proj(project: Project) -> Project:
    """The CLI in process (tests/conftest.py `project`): these checks read exit codes, output and
    stored rows."""
    return project


EVALS = """
from niceeval_cli import define_eval
from niceeval_cli.expect import equals


@define_eval()
async def e1(t):
    turn = await t.send("e1")
    t.check(turn.message, equals("yes")).label("Says yes")
    t.check(turn.message, equals("no")).label("Says no")


@define_eval(cases=["a", "b"])
async def e2(t, case):
    turn = await t.send("e2")
    t.check(turn.message, equals("yes")).label("Says yes")
"""


def _project(proj: Project) -> None:
    write_pattern_project(proj, EVALS, 'attempts = 3\npass_rule = "all"\n')


def _run(proj: Project, e1: int, e2: int) -> str:
    return run_with_passes(proj, e1=e1, e2=e2)


def _outputs(proj: Project, base: str, new: str, store: Path | None = None) -> dict[str, str]:
    """`compare` in every format (and its exit code)."""
    where = ("--store", str(store)) if store is not None else ()
    shown = {}
    for fmt in ("json", "ndjson", "csv", "terminal"):
        flags = ("--format", fmt) if fmt != "terminal" else ()
        done = proj.cli("compare", base, new, *flags, *where, env={"NO_COLOR": "1", "COLUMNS": "160"})
        assert done.returncode in (0, 1), done.stderr
        shown[fmt] = f"{done.returncode}\n{done.stdout}"
    return shown


def _folds(store: Path, run_id: str) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    conn = sqlite3.connect(store)
    try:
        rows = conn.execute("SELECT * FROM unit_folds WHERE run_id = ? ORDER BY experiment_id, eval_id",
                            [run_id]).fetchall()
        marks = conn.execute("SELECT run_id, format, units FROM unit_fold_runs WHERE run_id = ?", [run_id]).fetchall()
    finally:
        conn.close()
    return rows, marks


def _fold_later(store: Path, *run_ids: str) -> None:
    """What finalising the runs would have stored, added to a copy of a store whose runs ended
    without it (the finalisation's own function, in a write transaction)."""
    with Store.open(store) as opened:
        conn = opened._db.conn
        for run_id in run_ids:
            with write_transaction(conn, store, "Folding"):
                store_unit_folds(conn, run_id)


def test_a_finished_run_stores_one_fold_row_per_unit_and_compare_reads_them(proj: Project) -> None:
    _project(proj)
    base, new = _run(proj, 9, 9), _run(proj, 1, 2)
    units = proj.sql("SELECT count(DISTINCT experiment_id || ' ' || eval_id) AS n FROM run_slots WHERE run_id = ?",
                     [new])[0]["n"]
    rows, marks = _folds(proj.store, new)
    assert units == 3 and len(rows) == 3
    assert marks == [(new, FOLD_FORMAT, 3)]
    assert {r[2] for r in rows} == {"pattern/e1", "pattern/e2[0]", "pattern/e2[1]"}
    (e1,) = proj.sql("SELECT attempts, told, kind, pass_rule, results, key_pairs FROM unit_folds "
                     "WHERE run_id = ? AND eval_id = 'pattern/e1'", [new])
    assert (e1["attempts"], e1["told"], e1["kind"], e1["pass_rule"], e1["results"]) == (3, 1, "pass", "all", 6)
    assert e1["key_pairs"] == '["0:Says yes","1:Says no"]'

    stored = _outputs(proj, base, new)
    assert '"class": "regressed"' in stored["json"]
    # The same rows with no stored folds (as a store from before schema 10): the same comparison.
    older = proj.root / "older.db"
    shutil.copy(proj.store, older)
    _drop_folds(older)
    assert _outputs(proj, base, new, older) == stored  # opening it upgrades it, with no stored folds
    assert _folds(older, new) == ([], [])


def _drop_folds(path: Path) -> None:
    """Turn a store into one whose runs ended before schema 10: the same file, schema 9, without
    the fold tables and their triggers (what schema 9 had); opening it upgrades it again."""
    conn = sqlite3.connect(path)
    try:
        for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger' AND (name LIKE 'unit_fold%' "
                                    "OR name = 'assertion_results_not_under_folds')").fetchall():
            conn.execute(f'DROP TRIGGER "{name}"')
        conn.execute("DROP TABLE unit_folds")
        conn.execute("DROP TABLE unit_fold_runs")
        conn.execute("PRAGMA user_version = 9")
        conn.commit()
    finally:
        conn.close()


def _all_rows(path: Path) -> dict[str, list[tuple[object, ...]]]:
    conn = sqlite3.connect(path)
    try:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        return {t: sorted(conn.execute(f'SELECT * FROM "{t}"').fetchall(), key=repr) for t in tables}
    finally:
        conn.close()


@pytest.mark.parametrize("seed", [2, 5])
def test_a_schema_9_store_is_upgraded_keeping_every_row_and_its_runs_fold_on_read(proj: Project, seed: int) -> None:
    proj.store.parent.mkdir(parents=True)
    base, new = unit_fold_store.build(proj.store, seed=seed, units=50, finish="store")
    stored = _outputs(proj, base, new)
    older = proj.root / "older.db"
    shutil.copy(proj.store, older)
    _drop_folds(older)
    before = _all_rows(older)
    on_read = _outputs(proj, base, new, older)  # the first open upgrades it (schema 10 and on)
    after = _all_rows(older)
    assert sqlite3.connect(older).execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert {t: rows for t, rows in after.items() if t in before} == before  # every earlier row kept
    assert after["unit_folds"] == after["unit_fold_runs"] == []  # runs from before fold on read
    assert on_read == stored


@pytest.mark.parametrize("seed", [0, 3, 7])
def test_a_run_still_running_folds_on_read_and_its_stored_folds_say_the_same_once_finished(
        proj: Project, seed: int) -> None:
    proj.store.parent.mkdir(parents=True)
    base, new = unit_fold_store.build(proj.store, seed=seed, units=50, finish="running")
    assert _folds(proj.store, new) == ([], []) and _folds(proj.store, base)[1] != []
    while_running = _outputs(proj, base, new)
    with Store.open(proj.store) as store:
        store.finish_run(new, status=RunStatus.INTERRUPTED, ended_at="2025-01-01T02:00:00.000Z", exit_code=130)
    rows, marks = _folds(proj.store, new)
    assert marks == [(new, FOLD_FORMAT, len(rows))] and len(rows) > 30
    assert _outputs(proj, base, new) == while_running


def test_a_stored_fold_is_what_folding_on_read_gives_for_stores_of_every_shape(proj: Project) -> None:
    """The same store finished by hand (folds on read) and with its folds stored afterwards by the
    finalisation's function: every format prints the same, and the `mixed` store (a unit whose
    attempts differ in identity) is compared from its attempts either way."""
    proj.store.parent.mkdir(parents=True)
    for seed, mixed in ((1, False), (4, False), (6, True)):
        path = proj.root / f"s{seed}.db"
        base, new = unit_fold_store.build(path, seed=seed, units=60, mixed=mixed)
        on_read = _outputs(proj, base, new, path)
        _fold_later(path, base, new)
        assert _folds(path, base)[1] and _folds(path, new)[1]
        assert _outputs(proj, base, new, path) == on_read, seed


def test_the_stored_folds_are_sealed_and_a_folded_attempt_never_gains_a_result(proj: Project) -> None:
    proj.store.parent.mkdir(parents=True)
    base, new = unit_fold_store.build(proj.store, seed=3, units=20, finish="running")
    conn = sqlite3.connect(proj.store)
    try:
        for statement, params in (
            ("UPDATE unit_folds SET attempts = attempts + 1 WHERE run_id = ?", [base]),
            ("DELETE FROM unit_folds WHERE run_id = ?", [base]),
            ("UPDATE unit_fold_runs SET units = 0 WHERE run_id = ?", [base]),
            ("DELETE FROM unit_fold_runs WHERE run_id = ?", [base]),
            ("INSERT OR REPLACE INTO unit_fold_runs (run_id, format, units) SELECT run_id, format, 0 FROM "
             "unit_fold_runs WHERE run_id = ?", [base]),
            # a running run is folded on read: nothing is stored for it
            ("INSERT INTO unit_fold_runs (run_id, format, units) VALUES (?, 1, 0)", [new]),
            ("INSERT INTO unit_folds (run_id, experiment_id, eval_id, attempts) VALUES (?, 'x', 'y', 1)", [new]),
            # a result added under an attempt the base run's folds summarise
            ("INSERT INTO assertion_results (id, attempt_id, ordinal, key, role, state, match_name, match_config, "
             "or_stop, match_kind) SELECT 'extra', attempt_id, 99, 'k', 'gate', 'mismatched', 'equals', '{}', 0, "
             "'boolean' FROM run_slots WHERE run_id = ? AND attempt_id IS NOT NULL LIMIT 1", [base]),
        ):
            with pytest.raises(sqlite3.DatabaseError):
                with conn:
                    conn.execute(statement, params)
        # a result of an attempt of the running run (no stored folds) is still accepted, as before
        with conn:
            conn.execute(
                "INSERT INTO assertion_results (id, attempt_id, ordinal, key, role, state, match_name, match_config, "
                "or_stop, match_kind) SELECT 'late', a.id, 99, 'k', 'gate', 'matched', 'equals', '{}', 0, 'boolean' "
                "FROM attempts a WHERE a.run_id = ? AND a.id NOT IN (SELECT attempt_id FROM run_slots WHERE run_id = ?"
                " AND attempt_id IS NOT NULL) LIMIT 1", [new, base])
    finally:
        conn.close()


def test_merge_stores_the_folds_of_the_runs_it_brings_and_compare_is_unchanged(proj: Project) -> None:
    proj.store.parent.mkdir(parents=True)
    source = proj.root / "source.db"
    base, new = unit_fold_store.build(source, seed=8, units=50, finish="store")
    expected = _outputs(proj, base, new, source)
    merged = proj.cli("merge", str(source))
    assert merged.returncode == 0, merged.stdout + merged.stderr
    for run_id in (base, new):
        assert _folds(proj.store, run_id) == _folds(source, run_id)  # folded in the target: the same rows
    assert _outputs(proj, base, new) == expected
    # A source whose runs ended without stored folds: the target folds them as it finishes them.
    bare = proj.root / "bare.db"
    b2, n2 = unit_fold_store.build(bare, seed=9, units=30, finish="sql")
    assert proj.cli("merge", str(bare)).returncode == 0
    for run_id in (b2, n2):
        rows, marks = _folds(proj.store, run_id)
        assert marks == [(run_id, FOLD_FORMAT, len(rows))] and rows
    _fold_later(bare, b2, n2)
    assert [_folds(proj.store, r) for r in (b2, n2)] == [_folds(bare, r) for r in (b2, n2)]


def test_a_shard_group_folds_on_read(proj: Project) -> None:
    _project(proj)
    base = _run(proj, 9, 9)
    for k in (1, 2):
        done = proj.run("--rerun-all", "--shard", f"{k}/2", "--group", "g7", env={"PASSES_e1": "1", "PASSES_e2": "2"})
        assert done.returncode in (0, 1), done.stdout + done.stderr
    shards = [r["id"] for r in proj.sql("SELECT id FROM runs WHERE group_id = 'g7' ORDER BY shard_index")]
    assert len(shards) == 2 and all(_folds(proj.store, s)[1] for s in shards)  # each shard run stores its own
    grouped = _outputs(proj, base, "g7")
    assert '"class": "regressed"' in grouped["json"]
    older = proj.root / "older.db"
    shutil.copy(proj.store, older)
    _drop_folds(older)
    assert _outputs(proj, base, "g7", older) == grouped


@pytest.fixture
def judges() -> Iterator[Judges]:
    with running_judges() as made:
        yield made


@pytest.fixture
def sut() -> Iterator[Loopback]:
    with answering_sut() as server:
        yield server


@pytest.mark.slow
def test_a_regrade_run_stores_its_folds(proj: Project, judges: Judges, sut: Loopback) -> None:
    write_judged_project(proj, judges, sut)
    assert proj.run(env=ENV).returncode == 0
    original = str(latest_run(proj)["id"])
    done = proj.cli("regrade", "--judge-model", "judge-b", env=ENV)
    assert done.returncode == 1, done.stdout + done.stderr
    regrade = str(latest_run(proj)["id"])
    rows, marks = _folds(proj.store, regrade)
    assert marks == [(regrade, FOLD_FORMAT, 1)] and rows[0][3] == 2  # one unit, its two attempts
    assert _folds(proj.store, original)[0][0][4:] != rows[0][4:]  # judge-b failed the gate: other counts
    shown = proj.cli("compare", original, regrade, "--format", "json")
    assert '"class": "regressed"' in shown.stdout, shown.stdout
