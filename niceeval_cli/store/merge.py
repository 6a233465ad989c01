"""`niceeval merge`: copy the sealed rows of other stores into this one (scale.md).

All in SQL over ATTACHed sources. Each source is first staged into TEMP tables (SQLite cannot
ATTACH inside a transaction, and at most ten files at once), where sources are compared with one
another; then one write transaction compares the staged rows with the target and inserts what is
new. Ids are kept. A row whose key is present with identical content is skipped, so merging twice
is a no-op; the same key with different content is a conflict and the whole merge is refused,
nothing written. A run present as `running` and arriving finished (same fixed columns) is
finished, as the file's triggers allow. Shards of one group planned from different plans (or
split into different shard counts) are refused.

Stored group verdicts (`group_verdicts`) are derived data and are not copied: a source's verdict
is of its own members; the merge stores the target's, for the groups it brought (`settle`), in
the same transaction. Stored unit folds (`unit_folds`) are derived too: each run the merge
finishes in the target is folded there, from the rows the target now holds, in the same
transaction (unit_folds.py), as a run that finishes itself.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .._states import RunStatus
from .connect import readonly_uri, write_transaction
from .errors import StoreError, translated
from .merge_checks import check_attachments, check_staged_rows
from .schema import (
    ASSERTION_COLUMNS,
    ATTEMPT_COLUMNS,
    EVENT_COLUMNS,
    EVENT_KEY,
    JUDGE_INPUT_COLUMNS,
    PLAN_COLUMNS,
    PLAN_KEY,
    RUN_COLUMNS,
    RUN_FINISH_COLUMNS,
    RUN_GROWING_COLUMNS,
    SLOT_COLUMNS,
    SLOT_KEY,
    TURN_COLUMNS,
    TURN_KEY,
)
from .unit_folds import store_unit_folds

_SHOWN = 5
_COLUMNS = {
    "runs": RUN_COLUMNS, "run_plan": PLAN_COLUMNS, "attempts": ATTEMPT_COLUMNS,
    "assertion_results": ASSERTION_COLUMNS, "turns": TURN_COLUMNS, "events": EVENT_COLUMNS, "run_slots": SLOT_COLUMNS,
    "judge_inputs": JUDGE_INPUT_COLUMNS,
}


@dataclass(frozen=True)
class _Table:
    name: str
    columns: tuple[str, ...]
    key: tuple[str, ...]

    @property
    def stage(self) -> str:
        return f"temp.niceeval_merge_{self.name}"


# Foreign-key order: a row's parents are inserted before it.
_TABLES = (
    _Table("runs", tuple(RUN_COLUMNS), ("id",)),
    _Table("run_plan", tuple(PLAN_COLUMNS), PLAN_KEY),
    _Table("attempts", tuple(ATTEMPT_COLUMNS), ("id",)),
    # Content-addressed (schema 9): the same key is the same content, so a source's copy is skipped.
    _Table("judge_inputs", tuple(JUDGE_INPUT_COLUMNS), ("sha256",)),
    _Table("assertion_results", tuple(ASSERTION_COLUMNS), ("id",)),
    _Table("turns", tuple(TURN_COLUMNS), TURN_KEY),
    _Table("events", tuple(EVENT_COLUMNS), EVENT_KEY),
    _Table("run_slots", tuple(SLOT_COLUMNS), SLOT_KEY),
)
_RUNS = _TABLES[0]
_SOURCE_LABELS = "temp.niceeval_merge_labels"  # the sources' human labels, counted for the note, not copied
# What makes two labels the same one (not the id: `label import` of an export gives new ids).
_LABEL_SAME = ("attempt_id", "assertion_key", "author", "value", "comment")
_FIXED_RUN_COLUMNS = tuple(c for c in RUN_COLUMNS if c not in RUN_FINISH_COLUMNS and c not in RUN_GROWING_COLUMNS)
#: What a running run's copy and a later copy of it may differ in: its finish, and its plan grown since.
_PROGRESS_COLUMNS = (*RUN_FINISH_COLUMNS, *RUN_GROWING_COLUMNS)
_RUNNING = RunStatus.RUNNING.value


class MergeConflict(StoreError):
    """The same id with different content in two stores: nothing was merged (exit 2)."""


@dataclass(frozen=True)
class MergeResult:
    """What a merge did, per table; and the logical runs (groups or plain runs) it brought."""

    copied: Mapping[str, int]
    skipped: Mapping[str, int]
    finished: int  # runs present as `running` that a source brought finished
    #: each source's newest run (its group when it is a shard), the newest first: what merge reports on
    logical_runs: tuple[str, ...] = field(default=())
    #: human labels the sources hold and the target does not: merge copies sealed rows only, so
    #: these stay behind unless moved with `label export` / `label import` (said, never silent)
    labels_left: int = 0

    @property
    def total_copied(self) -> int:
        return sum(self.copied.values())


def _label_same(left: str, right: str) -> str:
    return " AND ".join(f"{left}.{c} IS {right}.{c}" for c in _LABEL_SAME)


def _on_key(table: _Table, left: str, right: str) -> str:
    return " AND ".join(f"{left}.{k} = {right}.{k}" for k in table.key)


def _same(columns: Sequence[str], left: str, right: str) -> str:
    return " AND ".join(f"{left}.{c} IS {right}.{c}" for c in columns)


def _key_text(table: _Table, values: Sequence[object]) -> str:
    if table.key == ("id",):
        return str(values[0])
    return "(" + ", ".join(f"{k}={v!r}" for k, v in zip(table.key, values, strict=True)) + ")"


def _conflicts(conn: sqlite3.Connection, table: _Table, incoming: str, present: str) -> list[tuple[object, ...]]:
    """Keys in `incoming` that `present` holds with other content (running → finished is not one)."""
    differs = f"NOT ({_same(table.columns, 'i', 'p')})"
    if table is _RUNS:  # the running copy's plan (`--until-decided`) no larger than the other's
        grown = " AND ".join(
            f"(i.{c} IS p.{c} OR (i.status = '{_RUNNING}' AND i.{c} <= p.{c}) "
            f"OR (p.status = '{_RUNNING}' AND p.{c} <= i.{c}))" for c in RUN_GROWING_COLUMNS)
        progresses = (
            f"(({_same(_FIXED_RUN_COLUMNS, 'i', 'p')}) AND {grown} "
            f"AND (i.status = '{_RUNNING}' OR p.status = '{_RUNNING}'))"
        )
        differs = f"{differs} AND NOT {progresses}"
    source = ", i._source" if incoming.startswith("temp.") else ""
    where = ", p._source" if present.startswith("temp.") else ""
    keys = ", ".join(f"i.{k}" for k in table.key)
    sql = (
        f"SELECT {keys}{source}{where} FROM {incoming} i JOIN {present} p ON {_on_key(table, 'i', 'p')} "
        f"WHERE {differs} LIMIT {_SHOWN + 1}"
    )
    return list(conn.execute(sql))


def _refuse(table: _Table, rows: list[tuple[object, ...]], incoming: str, present: str) -> MergeConflict:
    n = len(table.key)
    shown = ", ".join(_key_text(table, row[:n]) for row in rows[:_SHOWN]) + (", ..." if len(rows) > _SHOWN else "")
    what = "run" if table is _RUNS else table.name.rstrip("s").replace("_result", " result")
    first = rows[0]
    there = first[n + 1] if len(first) > n + 1 else present
    here = first[n] if len(first) > n else incoming
    return MergeConflict(
        f"merge refused: {what} {shown} is in {here} and in {there} with different content "
        f"(table {table.name}: same id, other values); nothing was written. Stores of one run share ids "
        "only for identical rows — was one of them edited, or copied from another run?"
    )


def _stage_source(conn: sqlite3.Connection, source: Path, read: Path) -> tuple[str, str, str] | None:
    """Attach one source, compare it with what is staged, stage its new rows. Returns its newest
    run as (started_at, run id, logical id: its group when it is a shard, else the run id), or
    None for a store without runs."""
    conn.execute("ATTACH ? AS niceeval_source", [readonly_uri(read)])
    # One read transaction: every table is read from one snapshot of a store that may still be
    # written (a slot read after its run was not would break the merge's foreign keys).
    conn.execute("BEGIN")
    try:
        for table in _TABLES:
            incoming = f"niceeval_source.{table.name}"
            found = _conflicts(conn, table, incoming, table.stage)
            if found:
                raise _refuse(table, [(*r[: len(table.key)], str(source), *r[len(table.key):]) for r in found],
                              str(source), "another source")
            columns = ", ".join(table.columns)
            if table is _RUNS:  # a staged running run that this source has finished: take the finished one
                conn.execute(
                    f"DELETE FROM {table.stage} WHERE status = '{_RUNNING}' AND id IN (SELECT id FROM {incoming} "
                    f"WHERE status != '{_RUNNING}')"
                )
            conn.execute(
                f"INSERT INTO {table.stage} ({columns}, _source) SELECT {columns}, ? FROM {incoming} i "
                f"WHERE NOT EXISTS (SELECT 1 FROM {table.stage} p WHERE {_on_key(table, 'i', 'p')})",
                [str(source)],
            )
        conn.execute(f"INSERT INTO {_SOURCE_LABELS} SELECT DISTINCT {', '.join(_LABEL_SAME)} "
                     f"FROM niceeval_source.labels i "
                     f"WHERE NOT EXISTS (SELECT 1 FROM {_SOURCE_LABELS} m WHERE {_label_same('m', 'i')})")
        newest = conn.execute(
            "SELECT started_at, id, CASE WHEN shard_count IS NOT NULL THEN group_id END FROM niceeval_source.runs "
            "ORDER BY started_at DESC, id DESC LIMIT 1"
        ).fetchone()
        conn.execute("COMMIT")
    finally:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        conn.execute("DETACH niceeval_source")
    if newest is None:
        return None
    started_at, run_id, group_id = newest
    return str(started_at), str(run_id), str(group_id or run_id)


def _create_stage(conn: sqlite3.Connection) -> None:
    conn.execute(f"DROP TABLE IF EXISTS {_SOURCE_LABELS}")
    conn.execute(f"CREATE TABLE {_SOURCE_LABELS} ({', '.join(_LABEL_SAME)})")
    for table in _TABLES:
        conn.execute(f"DROP TABLE IF EXISTS {table.stage}")
        conn.execute(
            f"CREATE TABLE {table.stage} AS SELECT {', '.join(table.columns)}, '' AS _source "
            f"FROM main.{table.name} WHERE 0"
        )
        short = table.stage.removeprefix("temp.")
        conn.execute(f"CREATE UNIQUE INDEX temp.{short}_key ON {short} ({', '.join(table.key)})")


def _drop_stage(conn: sqlite3.Connection) -> None:
    conn.execute(f"DROP TABLE IF EXISTS {_SOURCE_LABELS}")
    for table in _TABLES:
        conn.execute(f"DROP TABLE IF EXISTS {table.stage}")


def _check_groups(conn: sqlite3.Connection) -> None:
    """Shards of one group must share one plan and one shard count."""
    bad = conn.execute(
        "SELECT group_id, group_concat(DISTINCT plan_digest), group_concat(DISTINCT shard_count) FROM main.runs "
        f"WHERE shard_count IS NOT NULL AND group_id IN (SELECT group_id FROM {_RUNS.stage}) GROUP BY group_id "
        "HAVING count(DISTINCT plan_digest) > 1 OR count(DISTINCT shard_count) > 1 LIMIT 1"
    ).fetchone()
    if bad is not None:
        group, digests, counts = bad
        if "," in str(counts):
            why = f"split into different shard counts ({counts})"
        else:
            why = "planned from different plans (plan digests " + ", ".join(
                d[:12] + "…" for d in str(digests).split(",")) + ")"
        raise MergeConflict(
            f"merge refused: the shards of group {group} were {why}; shards of one group must be planned from "
            "the same evals, experiments and attempts with the same --shard N. Nothing was written; "
            "run the shards again under another --group."
        )


def _write(conn: sqlite3.Connection) -> tuple[dict[str, int], dict[str, int], int]:
    """Compare, then insert; runs go in as `running` and are finished last, because the file
    accepts slots and plan rows only for a running run (schema.py)."""
    for table in _TABLES:
        found = _conflicts(conn, table, table.stage, f"main.{table.name}")
        if found:
            raise _refuse(table, found, "a source", "the target store")
    check_attachments(conn, {t.name: t.stage for t in _TABLES}, {t.name: t.key for t in _TABLES})
    runs = _RUNS.stage
    conn.execute("DROP TABLE IF EXISTS temp.niceeval_merge_finishing")
    conn.execute(
        f"CREATE TABLE temp.niceeval_merge_finishing AS SELECT i.id AS id FROM {runs} i WHERE i.status != "
        f"'{_RUNNING}' AND (NOT EXISTS (SELECT 1 FROM main.runs p WHERE p.id = i.id) OR EXISTS "
        f"(SELECT 1 FROM main.runs p WHERE p.id = i.id AND p.status = '{_RUNNING}'))"
    )
    finished = conn.execute(
        "SELECT count(*) FROM temp.niceeval_merge_finishing f JOIN main.runs p ON p.id = f.id"
    ).fetchone()[0]
    copied: dict[str, int] = {}
    skipped: dict[str, int] = {}
    for table in _TABLES:
        columns = ", ".join(table.columns)
        selected = columns
        if table is _RUNS:  # as running: its slots and plan can then be added
            selected = ", ".join(
                f"'{_RUNNING}'" if c == "status" else "NULL" if c in ("ended_at", "exit_code") else f"i.{c}"
                for c in table.columns
            )
        staged = conn.execute(f"SELECT count(*) FROM {table.stage}").fetchone()[0]
        inserted = conn.execute(
            f"INSERT INTO main.{table.name} ({columns}) SELECT {selected} FROM {table.stage} i "
            f"WHERE NOT EXISTS (SELECT 1 FROM main.{table.name} p WHERE {_on_key(table, 'i', 'p')})"
        ).rowcount
        copied[table.name] = inserted
        skipped[table.name] = staged - inserted - (finished if table is _RUNS else 0)
    finish = ", ".join(f"{c} = (SELECT i.{c} FROM {runs} i WHERE i.id = main.runs.id)" for c in _PROGRESS_COLUMNS)
    conn.execute(
        f"UPDATE main.runs SET {finish} WHERE status = '{_RUNNING}' AND id IN "
        "(SELECT id FROM temp.niceeval_merge_finishing)"
    )
    for (run_id,) in conn.execute("SELECT id FROM temp.niceeval_merge_finishing ORDER BY id").fetchall():
        store_unit_folds(conn, run_id)
    conn.execute("DROP TABLE temp.niceeval_merge_finishing")
    _check_groups(conn)
    return copied, skipped, finished


def merge_stores(
    conn: sqlite3.Connection, target: Path, sources: Sequence[Path],
    *, settle: Callable[[Sequence[str]], None] | None = None, read_from: Mapping[Path, Path] | None = None,
) -> MergeResult:
    """Copy every source's sealed rows into the target connection's store, all or nothing.

    The sources must be readable stores of the current schema (the caller opened each once).
    `settle`: called inside the write transaction, once the rows are in, with the group ids of
    the shard runs the sources hold (the store's own verdicts for them are written there).
    `read_from`: the file each source is read from, when not itself (an upgraded copy of an
    older store: merge_sources.py); messages name the source.
    """
    resolved = {target.resolve()}
    for source in sources:
        if source.resolve() in resolved:
            raise StoreError(f"merge: {source} is given twice (or is the target store itself); give each store once.")
        resolved.add(source.resolve())
    with translated(target, "Merging into"):
        _create_stage(conn)
        try:
            newest: list[tuple[str, str, str]] = []
            for source in sources:
                with translated(source, "Reading for the merge"):
                    found = _stage_source(conn, source, (read_from or {}).get(source, source))
                if found is not None:
                    newest.append(found)
            for table in _TABLES:  # before the write: a malformed row never reaches the target
                check_staged_rows(conn, table.name, table.stage, _COLUMNS[table.name], table.key)
            with write_transaction(conn, target, "Merging into"):
                copied, skipped, finished = _write(conn)
                labels_left = conn.execute(f"SELECT count(*) FROM {_SOURCE_LABELS} i WHERE NOT EXISTS "
                                           f"(SELECT 1 FROM main.labels m WHERE {_label_same('m', 'i')})").fetchone()[0]
                if settle is not None:
                    settle([row[0] for row in conn.execute(
                        f"SELECT DISTINCT group_id FROM {_RUNS.stage} WHERE shard_count IS NOT NULL "
                        "AND group_id IS NOT NULL ORDER BY group_id"
                    )])
        finally:
            _drop_stage(conn)
    logical = tuple(dict.fromkeys(found[2] for found in sorted(newest, reverse=True)))
    return MergeResult(copied, skipped, finished, logical, labels_left)
