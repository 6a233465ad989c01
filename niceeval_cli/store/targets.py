"""Query targets: the rows of `niceeval query runs|attempts|assertions|turns|events`.

Column names and column-named dicts in the documented order (cli.md, `query`): every column of
the table, for scripts. `runs` lists each shard group as a row of its own (kind `group`) just
before its newest member; the other targets read the latest run (or group), one named by id or
prefix, or every run (`--run all`), and refuse an `--experiment` the runs read do not have
(experiments.py). `Store.query` calls `query` over its `Db`.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Sequence
from typing import Any, Literal

from .._selectors import selects_any_experiment
from . import groups, references
from .db import Db
from .errors import StoreError, translated
from .experiments import check_experiments_present
from .groups import GROUP_KIND, GROUP_STATUS_FILTERS
from .queries import (
    RUN_STATUS_FILTERS,
    Names,
    as_tuple,
    assertions_select,
    attempts_select,
    runs_select,
    transcript_select,
)

QueryTarget = Literal["runs", "attempts", "assertions", "turns", "events"]
QUERY_TARGETS: tuple[str, ...] = ("runs", "attempts", "assertions", "turns", "events")
ALL_RUNS = "all"


def query_stream(
    db: Db,
    target: QueryTarget,
    *,
    run: str | None = None,
    experiment: Names = None,
    eval_prefix: Names = None,
    states: Names = None,
    limit: int | None = None,
    columns: Sequence[str] | None = None,
) -> tuple[list[str], Iterator[dict[str, Any]]]:
    """Column names and rows for `niceeval query`, in the documented order (`run`: None → the
    latest run, for `runs` every run; "all" → every run; else an id or prefix), the rows read as
    they are consumed, a chunk at a time, while `db` stays open:
    `niceeval query | head` stops reading when its reader does, and a million rows are never held
    at once (they were: 1.2 GB for 400 000 results before the first line was written)."""
    if target == "runs":
        if eval_prefix:
            raise StoreError("--eval does not apply to `query runs`.")
        names, run_rows = _query_runs(db, run, experiment=experiment, states=states, limit=limit)
        return names, iter(run_rows)
    if target not in QUERY_TARGETS:
        raise StoreError(f"Unknown query target {target!r}; choose {', '.join(QUERY_TARGETS)}.")
    ref = None if run == ALL_RUNS else references.resolve_ref(db, run)[1]
    run_id = None if ref is None else references.run_scope(db, ref)
    with translated(db.path, "Reading the runs' experiments"):
        check_experiments_present(db.conn, run_id, as_tuple(experiment),
                                  "the store" if ref is None else f"run {ref}")
    if target == "attempts" and columns is not None:  # a reader that needs a few columns of many rows
        present = db.columns("attempts")
        sql, params = attempts_select(run_id, experiment=experiment, eval_prefix=eval_prefix, states=states,
                                      limit=limit, columns=[c for c in columns if c in present])
    elif target in ("attempts", "assertions"):
        select = attempts_select if target == "attempts" else assertions_select
        sql, params = select(
            run_id, experiment=experiment, eval_prefix=eval_prefix, states=states, limit=limit
        )
    else:
        sql, params = transcript_select(
            target, run_id, experiment=experiment, eval_prefix=eval_prefix, states=states, limit=limit
        )
    with translated(db.path, f"Querying {target}"):
        cursor = db.conn.execute(sql, params)
    names = [d[0] for d in cursor.description]
    return names, _chunked(cursor, names, db, target)


_CHUNK = 1000  # rows fetched at a time by `query_stream`


def _chunked(cursor: sqlite3.Cursor, names: list[str], db: Db, target: str) -> Iterator[dict[str, Any]]:
    while True:
        with translated(db.path, f"Querying {target}"):
            chunk = cursor.fetchmany(_CHUNK)
        if not chunk:
            return
        for row in chunk:
            yield dict(zip(names, row, strict=True))


def _query_runs(
    db: Db, run: str | None, *, experiment: Names, states: Names, limit: int | None
) -> tuple[list[str], list[dict[str, Any]]]:
    """Runs newest first, each shard group as a row of its own (kind `group`) just before its
    newest member; `--run GROUP` gives the group row and its member runs."""
    wanted = as_tuple(states)
    unknown = [s for s in wanted if s not in RUN_STATUS_FILTERS and s not in GROUP_STATUS_FILTERS]
    if unknown:
        raise StoreError(
            f"Unknown run state {', '.join(repr(s) for s in unknown)}; "
            f"choose from {', '.join((*RUN_STATUS_FILTERS, *GROUP_STATUS_FILTERS))}."
        )
    run_states = [s for s in wanted if s in RUN_STATUS_FILTERS]
    group_states = [s for s in wanted if s in GROUP_STATUS_FILTERS]
    scope: list[str] | None = None
    group_rows: list[dict[str, Any]] = []
    if run in (None, ALL_RUNS):
        if not (run_states and not group_states):
            ids = [row["group_id"] for row in db.rows(
                "Listing groups", "SELECT DISTINCT group_id FROM runs WHERE shard_count IS NOT NULL "
                "AND group_id IS NOT NULL",
            )]
            group_rows = [read[0] for read in (groups.group_row_read(db, i) for i in ids) if read is not None]
    else:
        kind, ident = references.resolve_run_or_group(db, run)
        scope = [ident]
        if kind == GROUP_KIND:  # the group row (decided once) and its member runs
            read = groups.group_row_read(db, ident)
            if read is None:
                raise StoreError(f"No group with id {ident!r} in {db.path}; `niceeval query runs` lists them.")
            scope = list(read[0]["member_run_ids"])
            group_rows = [] if run_states and not group_states else [read[0]]
    sql, params = runs_select(scope, experiment=experiment, states=run_states or None, limit=None)
    with translated(db.path, "Querying runs"):
        cursor = db.conn.execute(sql, params)
        columns = [d[0] for d in cursor.description]
        runs = [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]
    if group_states and not run_states:
        runs = []
    rows = _with_groups(runs, group_rows, experiment, group_states)
    return columns, rows[:limit] if limit is not None else rows


def _with_groups(
    runs: list[dict[str, Any]], groups: list[dict[str, Any]], experiment: Names, states: Sequence[str]
) -> list[dict[str, Any]]:
    """Each group row placed just before its newest member run (or by its start time when the
    run rows were filtered away), the group-only keys dropped."""
    wanted = as_tuple(experiment)
    placed: dict[str, dict[str, Any]] = {}
    loose: list[dict[str, Any]] = []
    for group in groups:
        members = group.pop("member_run_ids")
        group.pop("run_status")
        if states and group["status"] not in states:
            continue
        if wanted and not any(selects_any_experiment(wanted, e) for e in json.loads(group["experiments"])):
            continue
        if members[0] in {r["id"] for r in runs}:
            placed[members[0]] = group
        else:
            loose.append(group)
    rows: list[dict[str, Any]] = []
    for row in runs:
        if row["id"] in placed:
            rows.append(placed[row["id"]])
        rows.append(row)
    for group in loose:
        at = next((i for i, r in enumerate(rows) if (r["started_at"], r["id"]) < (group["started_at"], group["id"])),
                  len(rows))
        rows.insert(at, group)
    return rows
