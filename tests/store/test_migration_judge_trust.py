"""Schema 5 → … → 8 (judge-trust.md): the agreement columns (`judge.samples`, schema 6) and the
judge's cost columns (schema 8) are added and every earlier row is kept as it was; its results read NULL agreement, as a
single sample's do, and its attempts an unknown judge cost."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from niceeval_cli.store import SCHEMA_VERSION, Store

# Written by `niceeval run` at commit 0db611b (schema 5): eval `judged` with a closed_qa judge
# assertion graded Y by a loopback judge, beside an equals check.
SCHEMA_5_DUMP = Path(__file__).parent / "data" / "schema5.sql"
ATTEMPT = "01M95F4WRJ87VPSRP3TZ6PT3ZW"


def _columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]


def _rows(path: Path, table: str, columns: list[str]) -> list[tuple[object, ...]]:
    with sqlite3.connect(path) as conn:
        return conn.execute(f"SELECT {', '.join(columns)} FROM {table} ORDER BY 1, 2").fetchall()


def test_a_schema_5_store_gains_the_agreement_columns_keeping_every_row(tmp_path: Path) -> None:
    path = tmp_path / "results.db"
    with sqlite3.connect(path) as conn:
        conn.executescript(SCHEMA_5_DUMP.read_text(encoding="utf-8"))
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 5
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        old = {t: _columns(conn, t) for t in tables}
    before = {t: _rows(path, t, columns) for t, columns in old.items()}
    Store.open(path).close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert {"agreement", "judge_samples"} <= set(_columns(conn, "assertion_results"))
        read = conn.execute("SELECT match_name, agreement, judge_samples FROM assertion_results "
                            "ORDER BY ordinal").fetchall()
        # Schema 8: the judge's cost apart; unknown (NULL) for an attempt sealed before.
        judge_cost = conn.execute("SELECT judge_cost_usd, judge_estimated_cost_usd FROM attempts").fetchall()
    assert read == [("closed_qa", None, None), ("equals", None, None)]
    assert judge_cost == [(None, None)]
    for table, columns in old.items():
        assert _rows(path, table, columns) == before[table], table
    with Store.open(path, readonly=True) as store:
        results = store.assertions_for_attempt(ATTEMPT)
        assert [(r.state, r.agreement, r.judge_samples) for r in results] == [("met", None, None),
                                                                              ("matched", None, None)]
