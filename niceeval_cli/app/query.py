"""`niceeval query`: sealed rows (or a read-only SQL statement's) for scripts, worst first."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._errors import UsageError
from ..store import QUERY_TARGETS as TARGETS


@dataclass(frozen=True)
class QueryRows:
    columns: list[str]
    rows: list[dict[str, Any]]
    target: str | None  # None: the rows of a --sql statement


def query_rows(
    path: Path,
    target: str,
    *,
    run: str | None = None,
    experiments: Sequence[str] = (),
    eval_prefixes: Sequence[str] = (),
    states: Sequence[str] = (),
    limit: int | None = None,
    sql: str | None = None,
) -> QueryRows:
    from ..store import Store

    if target not in TARGETS:
        raise UsageError(f"query target {target!r} is not one of {', '.join(TARGETS)}")
    with Store.open(path, readonly=True) as db:
        if sql is not None:
            columns, tuples = db.sql(sql)
            return QueryRows(list(columns), [dict(zip(columns, t, strict=True)) for t in tuples], None)
        columns, rows = db.query(
            target, run=run, experiment=list(experiments) or None,  # type: ignore[arg-type]
            eval_prefix=list(eval_prefixes) or None, states=list(states) or None, limit=limit,
        )
    return QueryRows(list(columns), [dict(r) for r in rows], target)
