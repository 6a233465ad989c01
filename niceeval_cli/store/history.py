"""An eval's history for planning: the latest sealed attempt of each of its slots (config.md, "Reuse").

History is kept under the eval's identity (module id, definition name; plus the case id for a case
eval: authoring.md), which every attempt sealed since schema 5 carries, so an eval whose displayed
id changed (its module gained or lost an eval) keeps its history. An attempt sealed before has no
identity: it is found by its eval id, as it always was.

An attempt made by `niceeval regrade` (`regraded_from`) is never a slot's history: it keeps the
end time of the attempt it re-judged, which always stays the one found, so planning reuses only
what a run executed and a regrade never makes the next run run anything again.
"""

from __future__ import annotations

import functools
import json
import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

__all__ = ["EvalRef", "LatestAttempt", "latest_attempts"]


class LatestAttempt(NamedTuple):
    """What planning reads of a slot's latest sealed attempt (`Store.latest_attempts`)."""

    eval_id: str  # the slot (eval_id, ordinal): the eval id asked for, which keys the answer
    ordinal: int
    id: str
    run_id: str
    state: str
    gate: str | None
    fingerprint: str
    duration_ms: float  # (its fingerprint's parts, read only when they differ: `fingerprint_parts_of`)
    ended_at: str = ""  # which of two found is the latest (then the greater id)


class EvalRef(NamedTuple):
    """One eval whose history is asked for: its id in this run (the answer's key) and its identity
    (None for a lookup by eval id alone)."""

    eval_id: str
    module: str | None = None
    name: str | None = None
    case_id: str | None = None


_SQLITE_INT_MAX = 2**63 - 1
_COLUMNS = "a.ordinal, a.id, a.run_id, a.state, a.gate, a.fingerprint, a.duration_ms, a.ended_at"
# Rows come as LatestAttempts are made: the eval id asked for first (no tuple rebuilt per row).
# The evals asked for, as one JSON parameter (a batch of 512 would be 2 048 bound values).
_WANT = (
    "WITH want(k, eval_id, module, name, case_id) AS (SELECT key, json_extract(value, '$[0]'), "
    "json_extract(value, '$[1]'), json_extract(value, '$[2]'), json_extract(value, '$[3]') FROM json_each(?2)) "
)
# Newest end time per (eval, ordinal) from the index alone, then only the attempts that ended then
# (no window function over every row of the slots' history). CROSS JOIN: SQLite keeps the left
# side outside, so each slot is one index seek.
_BY_IDENTITY = (
    _WANT + f"SELECT m.eval_id, {_COLUMNS} FROM (SELECT w.eval_id AS eval_id, w.module AS module, w.name AS name, "
    "w.case_id AS case_id, b.ordinal AS ordinal, max(b.ended_at) AS newest FROM want w CROSS JOIN attempts b "
    "ON b.experiment_id = ?1 AND b.eval_module = w.module AND b.eval_name = w.name AND b.case_id IS w.case_id "
    "AND b.ordinal BETWEEN ?3 AND ?4 WHERE w.module IS NOT NULL GROUP BY w.k, b.ordinal) AS m "
    "CROSS JOIN attempts a ON a.experiment_id = ?1 "
    "AND a.eval_module = m.module AND a.eval_name = m.name AND a.case_id IS m.case_id AND a.ordinal = m.ordinal "
    "AND a.ended_at = m.newest AND a.regraded_from IS NULL"
)
# Attempts sealed before schema 5 (no identity), by eval id; and every attempt, for a lookup by id.
_BY_EVAL_ID = (
    _WANT + f"SELECT m.eval_id, {_COLUMNS} FROM (SELECT w.k AS k, w.eval_id AS eval_id, w.module AS module, "
    "b.ordinal AS ordinal, max(b.ended_at) AS newest FROM want w CROSS JOIN attempts b "
    "ON b.experiment_id = ?1 AND b.eval_id = w.eval_id AND (b.eval_module IS NULL OR w.module IS NULL) "
    "AND b.ordinal BETWEEN ?3 AND ?4 GROUP BY w.k, b.ordinal) AS m "
    "CROSS JOIN attempts a ON a.experiment_id = ?1 AND a.eval_id = m.eval_id "
    "AND a.ordinal = m.ordinal AND a.ended_at = m.newest AND (a.eval_module IS NULL OR m.module IS NULL) "
    "AND a.regraded_from IS NULL"
)
_ANY_WITHOUT_IDENTITY = "SELECT 1 FROM attempts WHERE experiment_id = ? AND eval_module IS NULL LIMIT 1"
_ALL = (
    "SELECT a.eval_id, a.ordinal, a.id, a.run_id, a.state, a.gate, a.fingerprint, a.duration_ms, a.ended_at "
    "FROM (SELECT eval_id, ordinal, max(ended_at) AS newest FROM attempts WHERE experiment_id = ?1 "
    "GROUP BY eval_id, ordinal) AS m CROSS JOIN attempts AS a "
    "ON a.experiment_id = ?1 AND a.eval_id = m.eval_id AND a.ordinal = m.ordinal AND a.ended_at = m.newest "
    "AND a.regraded_from IS NULL"
)


def latest_attempts(
    conn: sqlite3.Connection, experiment_id: str, evals: Sequence[EvalRef | str] | None, ordinal: int | None = None,
) -> dict[tuple[str, int], LatestAttempt]:
    """The latest sealed attempt of each (eval, ordinal) slot of `evals` in an experiment, keyed by
    the eval id asked for; `evals` None: every slot the experiment has, by stored eval id. A plain
    str asks by eval id alone. Of two attempts that ended at once the greater id is the latest.
    `ordinal`: only that ordinal's slots (`run --until-decided` plans one more ordinal a round:
    the history of the others is not read again, an index seek apart)."""
    if evals is None:
        return _latest(conn.execute(_ALL, [experiment_id]), {})
    refs = [EvalRef(e) if isinstance(e, str) else e for e in evals]
    if not refs:
        return {}
    want = json.dumps(refs, ensure_ascii=False)  # each EvalRef a list: [eval id, module, name, case id]
    span = (0, _SQLITE_INT_MAX) if ordinal is None else (ordinal, ordinal)
    found: dict[tuple[str, int], LatestAttempt] = {}
    if any(r.module is not None for r in refs):
        _latest(conn.execute(_BY_IDENTITY, [experiment_id, want, *span]), found)
    if any(r.module is None for r in refs) or conn.execute(_ANY_WITHOUT_IDENTITY, [experiment_id]).fetchone():
        _latest(conn.execute(_BY_EVAL_ID, [experiment_id, want, *span]), found)
    return found


def _latest(rows: Iterable[Any], found: dict[tuple[str, int], LatestAttempt]) -> dict[tuple[str, int], LatestAttempt]:
    make = functools.partial(tuple.__new__, LatestAttempt)  # `_make` without its Python frame per row
    for row in rows:
        key = (row[0], row[1])
        other = found.get(key)
        if other is None or (row[8], row[2]) > (other.ended_at, other.id):
            found[key] = make(row)  # rows in LatestAttempt's order
    return found
