"""The store's SQL folds of a run's units (`Store.unit_folds`) are the Python folds of its attempts.

`compare BASE NEW` pairs the folds the store adds up in SQL (issue 25 item 8: two runs of
100 000 attempts in ≤ 1.5 s); `compare --experiments`, the report and any unit the store cannot
fold by counts still fold attempts in Python (`_unit_folds.unit_fold`). On seeded stores with
every shape of unit (tests/support/unit_fold_store.py) the two give the same units, and
`compare_runs` the same comparison as comparing the attempts.
"""

from __future__ import annotations

import json
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


class _Recording:
    """A connection that keeps each statement it runs with its parameters."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.calls: list[tuple[str, object]] = []

    def execute(self, sql: str, params: object = ()) -> sqlite3.Cursor:
        self.calls.append((sql, params))
        return self.conn.execute(sql, params)  # type: ignore[arg-type]


def _scores_by_unit(conn: sqlite3.Connection, run_id: str) -> dict[tuple[str, str], tuple[set, set]]:
    """Each score-style unit's distinct scores and distinct maxima (of the attempts with a score)."""
    found: dict[tuple[str, str], tuple[set, set]] = {}
    for experiment, eval_id, score, top in conn.execute(
            "SELECT s.experiment_id, s.eval_id, a.score, a.max_score FROM run_slots s JOIN attempts a "
            "ON a.id = s.attempt_id WHERE s.run_id = ? AND a.kind = 'score' AND a.score IS NOT NULL", (run_id,)):
        scores, maxima = found.setdefault((experiment, eval_id), (set(), set()))
        scores.add(score)
        maxima.add(top)
    return found


def test_scores_are_read_only_for_the_units_whose_scores_differ(tmp_path: Path) -> None:
    """Most score-style units score alike in every attempt and are told by their counts; only the
    others' scores are read one by one, found by their slots' key — the statement does work in
    proportion to those units, not a second walk of the whole run (issue 25 item 8)."""
    path = tmp_path / "results.db"
    base, _ = unit_fold_store.build(path, seed=5, units=400)
    conn = sqlite3.connect(path)
    recording = _Recording(conn)
    assert unit_folds(Db(recording, path), base) is not None  # type: ignore[arg-type]
    scoring = [(sql, params) for sql, params in recording.calls if "s.ordinal, a.state, a.gate, a.score" in sql]
    assert len(scoring) == 1, recording.calls
    sql, params = scoring[0]
    read = {tuple(unit) for unit in json.loads(params[0])}  # type: ignore[index]
    units = _scores_by_unit(conn, base)
    varied = {unit for unit, (scores, _) in units.items() if len(scores) > 1}
    alike = {unit for unit, (scores, maxima) in units.items() if len(scores) == 1 and len(maxima) == 1}
    assert varied and alike  # the store holds both
    assert varied <= read  # what the counts cannot tell is read
    assert not read & alike  # what they can is not
    # The work: the statement finds the chosen units' slots by key. The same rows chosen by a
    # walk of the run (as the folds did before) do about seven times the work, and fail the check.
    attempts_sql = next(s for s, _ in recording.calls if "count(a.gate)" in s)
    walking = sql.split(" AND (s.experiment_id, s.eval_id) IN", 1)[0].replace(
        "WITH whole AS MATERIALIZED (", "") + (
        " AND (s.experiment_id, s.eval_id) IN (SELECT s.experiment_id, s.eval_id FROM run_slots s JOIN attempts a "
        f"ON a.id = s.attempt_id WHERE s.run_id = '{base}' AND a.kind = 'score' GROUP BY 1, 2 "
        "HAVING min(a.score) IS NOT max(a.score) OR min(a.max_score) IS NOT max(a.max_score))")
    whole_run = sum(_work(conn, attempts_sql)[:2])
    chosen = sum(_work_with(conn, sql, params)[:2])
    walked = sum(_work_with(conn, walking, ())[:2])
    assert chosen * 20 < whole_run, (chosen, whole_run)  # a twentieth of the attempts statement's work
    assert walked * 20 > whole_run, (walked, whole_run)
    conn.close()


def _work_with(conn: sqlite3.Connection, sql: str, params: object) -> tuple[int, int, int]:
    counted = [0]

    def count() -> int:
        counted[0] += 1
        return 0

    conn.set_progress_handler(count, 100)
    try:
        cursor = conn.execute(sql, params)  # type: ignore[arg-type]
        first, counted[0] = counted[0], 0
        rows = cursor.fetchall()
        return first, counted[0], len(rows)
    finally:
        conn.set_progress_handler(None, 0)


def _group_store(path: Path, ordinals: tuple[tuple[int, ...], tuple[int, ...]]) -> None:
    """A group `g` of two shard runs holding one pass-style unit, shard K its attempts at `ordinals[K-1]`."""
    from niceeval_cli.store.schema import ATTEMPT_COLUMNS, INSERT_ATTEMPT, INSERT_SLOT

    Store.open(path).close()
    conn = sqlite3.connect(path)
    with conn:
        for shard, mine in enumerate(ordinals, start=1):
            run_id = f"run-{shard}"
            conn.execute(
                "INSERT INTO runs (id, started_at, status, argv, niceeval_version, experiments, group_id, "
                "shard_index, shard_count) VALUES (?, ?, 'running', '[\"run\"]', 'test', '[]', 'g', ?, 2)",
                (run_id, f"2025-01-01T00:00:0{shard}.000Z", shard))
            for ordinal in mine:
                row = dict.fromkeys(ATTEMPT_COLUMNS)
                row.update(id=f"a-{shard}-{ordinal}", run_id=run_id, experiment_id="exp", eval_id="e",
                           ordinal=ordinal, kind="pass", state="passed" if ordinal % 2 else "failed",
                           fingerprint="f" * 64, fingerprint_parts="{}", started_at="2025-01-01T00:00:00.000Z",
                           ended_at="2025-01-01T00:00:01.000Z", duration_ms=1.0, judge_tokens=0)
                conn.execute(INSERT_ATTEMPT, tuple(row[c] for c in ATTEMPT_COLUMNS))
                conn.execute(INSERT_SLOT, (run_id, "exp", "e", ordinal, row["id"], "origin", "new", "all"))
            conn.execute("UPDATE runs SET status = 'finished', ended_at = ?, exit_code = 0 WHERE id = ?",
                         ("2025-01-01T01:00:00.000Z", run_id))
    conn.close()


def test_a_group_whose_shards_repeat_an_ordinal_is_not_folded_by_counts(tmp_path: Path) -> None:
    """One run's slots cannot repeat a unit's ordinal (their key), so its folds count slots; a
    group's members can, and a unit of a group is then read attempt by attempt."""
    split, repeated = tmp_path / "split.db", tmp_path / "repeated.db"
    _group_store(split, ((0, 2), (1, 3)))
    _group_store(repeated, ((0, 1), (1, 2)))
    with Store.open(split, readonly=True) as store:
        folds = store.unit_folds("g")
        assert folds is not None and [(f.attempts, f.passed, f.failed) for f in folds] == [(4, 2, 2)]
    with Store.open(repeated, readonly=True) as store:
        assert store.unit_folds("g") is None
        assert store.unit_folds("run-1") is not None  # each run alone folds
