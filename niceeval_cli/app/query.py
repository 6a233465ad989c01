"""`niceeval query`: sealed rows (or a read-only SQL statement's) for scripts, worst first."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._errors import UsageError
from ..store import QUERY_TARGETS as TARGETS


@dataclass(frozen=True)
class QueryRows:
    columns: list[str]
    rows: Iterable[dict[str, Any]]  # a target's rows are read as they are iterated (`query_rows`)
    target: str | None  # None: the rows of a --sql statement


@contextmanager
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
    confidence: float = 0.95,
    k: int | None = None,
) -> Iterator[QueryRows]:
    """The rows of `niceeval query`, while the store is open: a target's rows are read from it
    as they are written out, so a reader that stops early (`| head`) stops the reading, and no
    more than a chunk is held at once. (`units`, `experiments` and `--sql` are read whole.)"""
    from ..store import Store

    if target not in (*TARGETS, *STATS_TARGETS):
        raise UsageError(f"query target {target!r} is not one of {', '.join((*TARGETS, *STATS_TARGETS))}")
    if target in STATS_TARGETS:
        if states:
            raise UsageError(f"--state does not apply to `query {target}` (a unit holds attempts of every state).")
        if sql is not None:
            raise UsageError(f"--sql replaces the target: give `niceeval query --sql ...` without {target!r}.")
    elif k is not None:
        raise UsageError(f"--k applies to `query units` only, not to `query {target}`.")
    if sql is not None:
        _sql_takes_no_filter(run=run, experiments=experiments, eval_prefixes=eval_prefixes, states=states)
    with Store.open(path, readonly=True) as db:
        if target in STATS_TARGETS:
            _, attempts = db.query("attempts", run=run, experiment=list(experiments) or None,
                                   eval_prefix=list(eval_prefixes) or None, columns=_STATS_COLUMNS)
            yield _stats_rows(target, attempts, confidence=confidence, k=k, limit=limit)
            return
        if sql is not None:
            columns, tuples = db.sql(sql, limit)
            yield QueryRows(list(columns), [dict(zip(columns, t, strict=True)) for t in tuples], None)
            return
        columns, rows = db.query_stream(
            target, run=run, experiment=list(experiments) or None,  # type: ignore[arg-type]
            eval_prefix=list(eval_prefixes) or None, states=list(states) or None, limit=limit,
        )
        yield QueryRows(list(columns), rows, target)


def _sql_takes_no_filter(**given: object) -> None:
    """`--sql` reads what its statement selects: a filter beside it used to be dropped without a
    word (`--sql 'SELECT * FROM attempts' --run X` printed every run's attempts)."""
    flags = {"run": "--run", "experiments": "--experiment", "eval_prefixes": "--eval", "states": "--state"}
    named = [flags[name] for name, value in given.items() if value]
    if named:
        raise UsageError(f"--sql reads what its statement selects, so {' and '.join(named)} cannot narrow it; "
                         "write the filter in the statement (`WHERE run_id = ...`). --limit N applies.")


#: Targets computed from the attempts of the run (statistics.md), not read from one table.
STATS_TARGETS = ("units", "experiments")
#: What they read of each attempt (not its texts, fingerprint or timings).
_STATS_COLUMNS = ("experiment_id", "eval_id", "case_id", "ordinal", "kind", "state", "gate", "score", "max_score")


def _stats_rows(target: str, attempts: list[dict[str, Any]], *, confidence: float, k: int | None,
                limit: int | None) -> QueryRows:
    from ..stats import EXPERIMENT_COLUMNS, UNIT_COLUMNS, experiment_rows, unit_rows

    # units in the reading order of their eval ids; attempts come worst first
    ordered = sorted(attempts, key=lambda a: (a["experiment_id"], a["eval_id"], a.get("ordinal") or 0))
    if target == "units":
        rows = unit_rows(ordered, confidence=confidence, k=k)
        columns = list(UNIT_COLUMNS)
    else:
        rows = experiment_rows(ordered, confidence=confidence)
        columns = list(EXPERIMENT_COLUMNS)
    return QueryRows(columns, rows[:limit] if limit is not None else rows, target)
