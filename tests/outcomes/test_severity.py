"""Reading order, worst first (outcomes.md, "Reading surfaces"; cli.md, `query` ordering)."""

from __future__ import annotations

import itertools
import sqlite3

import pytest

from niceeval_cli._states import AssertionState, AttemptState, GateState
from niceeval_cli.outcomes import (
    ASSERTION_SEVERITY_SQL,
    ATTEMPT_SEVERITY_SQL,
    assertion_severity,
    assertion_severity_sql,
    attempt_severity,
    attempt_severity_sql,
)

A, G, S = AttemptState, GateState, AssertionState
GATES: list[GateState | None] = [*GateState, None]  # None: a pass-style attempt (empty gate column)
# Every attempt shape that can be sealed, from worst to best (ties share a bucket).
ATTEMPT_ORDER: list[list[tuple[AttemptState, GateState | None]]] = [
    [(A.ERRORED, None), *((A.ERRORED, g) for g in GateState)],
    [(A.FAILED, None)],
    [(A.UNRANKABLE, g) for g in GateState],
    [(A.SCORED, G.FAILED)],
    [(A.PASSED, None), (A.SCORED, G.PASSED), (A.SCORED, G.NONE), (A.SCORED, G.UNAVAILABLE)],
]
ASSERTION_ORDER: list[set[AssertionState]] = [
    {S.ERRORED},
    {S.MISMATCHED, S.BELOW},
    {S.UNAVAILABLE},
    {S.MATCHED, S.MEASURED, S.MET},
]


def test_attempt_order_lists_every_sealable_shape() -> None:
    listed = [shape for bucket in ATTEMPT_ORDER for shape in bucket]
    pass_style = {(s, None) for s in (A.PASSED, A.FAILED, A.ERRORED)}
    score_style = set(itertools.product([A.SCORED, A.UNRANKABLE, A.ERRORED], GateState))
    assert len(listed) == len(set(listed))
    assert set(listed) == pass_style | score_style


@pytest.mark.parametrize(("rank", "bucket"), list(enumerate(ATTEMPT_ORDER)))
def test_attempts_read_errored_failed_unrankable_gate_failed_then_the_rest(
    rank: int, bucket: list[tuple[AttemptState, GateState | None]]
) -> None:
    assert {attempt_severity(state, gate) for state, gate in bucket} == {rank}


def test_attempt_severity_accepts_stored_strings() -> None:
    assert attempt_severity("scored", "failed") == 3
    assert attempt_severity("passed", None) == 4


def test_attempt_severity_rejects_unknown_states() -> None:
    with pytest.raises(ValueError):
        attempt_severity("ok", None)


def test_assertion_order_covers_every_state_once() -> None:
    assert sorted(s for bucket in ASSERTION_ORDER for s in bucket) == sorted(AssertionState)


@pytest.mark.parametrize(("rank", "bucket"), list(enumerate(ASSERTION_ORDER)))
def test_assertions_read_errored_short_unavailable_then_the_rest(
    rank: int, bucket: set[AssertionState]
) -> None:
    assert {assertion_severity(s) for s in bucket} == {rank}
    assert {assertion_severity(str(s)) for s in bucket} == {rank}


def test_sorting_by_severity_keeps_registration_order_inside_each_group() -> None:
    results = [S.MATCHED, S.UNAVAILABLE, S.BELOW, S.ERRORED, S.MET, S.MISMATCHED, S.UNAVAILABLE]
    ordered = sorted(enumerate(results), key=lambda r: (assertion_severity(r[1]), r[0]))
    assert [i for i, _ in ordered] == [3, 2, 5, 1, 6, 0, 4]


# ── the store sorts with SQL built from the same tables ──────────────────────────────────


@pytest.fixture
def db() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE attempts (id INTEGER, state TEXT, gate TEXT)")
    conn.execute("CREATE TABLE assertion_results (id INTEGER, state TEXT)")
    return conn


def test_attempt_sql_agrees_with_python_for_every_state_and_gate(db: sqlite3.Connection) -> None:
    shapes = list(itertools.product(AttemptState, GATES))
    db.executemany(
        "INSERT INTO attempts VALUES (?, ?, ?)",
        [(i, str(s), None if g is None else str(g)) for i, (s, g) in enumerate(shapes)],
    )
    rows = db.execute(f"SELECT state, gate, {ATTEMPT_SEVERITY_SQL} FROM attempts").fetchall()
    assert len(rows) == len(shapes)
    for state, gate, severity in rows:
        assert severity == attempt_severity(state, gate), (state, gate)


def test_assertion_sql_agrees_with_python_for_every_state(db: sqlite3.Connection) -> None:
    db.executemany(
        "INSERT INTO assertion_results VALUES (?, ?)", [(i, str(s)) for i, s in enumerate(AssertionState)]
    )
    rows = db.execute(f"SELECT state, {ASSERTION_SEVERITY_SQL} FROM assertion_results").fetchall()
    assert len(rows) == len(AssertionState)
    for state, severity in rows:
        assert severity == assertion_severity(state), state


def test_sql_orders_attempts_worst_first(db: sqlite3.Connection) -> None:
    rows = [(1, "passed", None), (2, "scored", "failed"), (3, "unrankable", "none"), (4, "errored", None),
            (5, "failed", None), (6, "scored", "passed")]  # fmt: skip
    db.executemany("INSERT INTO attempts VALUES (?, ?, ?)", rows)
    order = db.execute(f"SELECT id FROM attempts ORDER BY {attempt_severity_sql()}, id").fetchall()
    assert [r[0] for r in order] == [4, 5, 3, 2, 1, 6]


def test_sql_accepts_qualified_column_names(db: sqlite3.Connection) -> None:
    db.execute("INSERT INTO attempts VALUES (1, 'scored', 'failed')")
    db.execute("INSERT INTO assertion_results VALUES (1, 'below')")
    sql = (
        f"SELECT {attempt_severity_sql('a.state', 'a.gate')}, {assertion_severity_sql('r.state')} "
        "FROM attempts AS a JOIN assertion_results AS r ON r.id = a.id"
    )
    assert db.execute(sql).fetchone() == (3, 1)


@pytest.mark.parametrize("column", ["state; DROP TABLE attempts", "", "1state", "a.b.c", "state)"])
def test_sql_builders_refuse_anything_but_a_column_name(column: str) -> None:
    with pytest.raises(ValueError, match="column"):
        attempt_severity_sql(column)
    with pytest.raises(ValueError, match="column"):
        assertion_severity_sql(column)
