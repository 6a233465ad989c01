"""`niceeval view` and `niceeval query`: sealed results read back."""

import sys
from collections.abc import Iterable
from importlib import import_module
from typing import Annotated, Any, Optional

import typer

from .._errors import UsageError
from .._selectors import check_not_empty
from ._common import (
    _SELECT,
    ConfigOpt,
    EvalFilter,
    ExperimentFilter,
    Int,
    Names,
    StoreOpt,
    Text,
    _console,
    _exit_codes,
    _flag,
    _guard,
    command,
)

_STATES = "errored, failed, unrankable, gate-failed, gate-unavailable, passed, scored"


@command(
    short_help="Show a run's results, failures first.",
    epilog="**Examples**\n\n"
           "* `niceeval view`: the latest run\n"
           "* `niceeval view --state failed --eval checkout/`: its failed attempts under checkout/\n"
           "* `niceeval view @3f2a`: one attempt in full (evidence, judge audit, usage)\n\n" + _exit_codes("view"),
)
@_guard
def view(
    ref: Annotated[Text, typer.Argument(
        metavar="RUN_ID|@ATTEMPT_ID", help="A run (default: the latest), or @ and an attempt id (a prefix is "
        "enough).", show_default=False)] = None,
    experiment: ExperimentFilter = None,
    eval_prefix: EvalFilter = None,
    state: Annotated[Names, typer.Option(
        "--state", metavar="STATE", help=f"Only attempts in this state (repeatable): {_STATES}.",
        rich_help_panel=_SELECT)] = None,
    show_all: Annotated[bool, _flag("--all", help="Expand passed attempts too.")] = False,
    confidence: Annotated[Optional[float], typer.Option(  # noqa: UP045
        "--confidence", metavar="C", help="Confidence of the intervals in the header (default: [stats] "
        "confidence, 0.95).")] = None,
    store: StoreOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Show sealed results: failed and unavailable items first, passed ones on one line each."""
    from ..app.project import reading_settings
    from ..app.view import STATE_FILTERS, ViewFilters, load_view

    unknown = [s for s in state or () if s not in STATE_FILTERS]
    if unknown:
        raise UsageError(f"--state {unknown[0]!r} is not one of {', '.join(STATE_FILTERS)}")
    check_not_empty(eval_prefix or (), "--eval")
    filters = ViewFilters(experiment or (), eval_prefix or (), state or ())
    path, _alpha, level = reading_settings(store, config, confidence=confidence)
    # The printer is imported while the page's header is counted on a second connection (app/view.py).
    page = load_view(path, ref, filters, expand=show_all, meanwhile=_import_printer)
    from ..reports.view import print_view

    print_view(_console(), page, confidence=level)


def _import_printer() -> None:
    import_module("niceeval_cli.reports.view")


@command(
    short_help="Print sealed rows (runs, attempts, assertions) for scripts.",
    epilog="**Examples**\n\n"
           "* `niceeval query attempts --state failed --format csv`\n"
           "* `niceeval query runs --run all --format json | jq '.[0].argv'`\n"
           "* `niceeval query --sql 'SELECT state, COUNT(*) FROM attempts GROUP BY state'`\n\n"
           "JSON columns (argv, evidence, match_config, ...) are JSON values in json/ndjson and text in "
           "csv. To a terminal, control characters in stored text are shown escaped.\n\n" + _exit_codes("query"),
)
@_guard
def query(
    target: Annotated[str, typer.Argument(
        metavar="TARGET", help="What to list: runs, attempts, assertions (the default), turns, events, units "
        "(one row per experiment × eval × case, with its interval) or experiments (each one's mean and interval).",
        show_default=False)
    ] = "assertions",
    run_ref: Annotated[Text, typer.Option(
        "--run", metavar="RUN_ID", help="Run id or prefix, or `all` (default: the latest).")] = None,
    experiment: ExperimentFilter = None,
    eval_prefix: EvalFilter = None,
    state: Annotated[Names, typer.Option(
        "--state", metavar="STATE", help="Only rows in this state (repeatable; for assertions `failed` = "
        "mismatched + below).", rich_help_panel=_SELECT)] = None,
    limit: Annotated[Int, typer.Option("--limit", metavar="N", min=1, help="At most N rows.")] = None,
    fmt: Annotated[Text, typer.Option(
        "--format", metavar="FORMAT", help="json, ndjson, csv or table (default: table on a terminal, else "
        "ndjson).", rich_help_panel="Output")] = None,
    sql: Annotated[Text, typer.Option(
        "--sql", metavar="STATEMENT", help="Run a read-only SQL statement instead.")] = None,
    k: Annotated[Int, typer.Option(
        "--k", metavar="K", min=1, help="units: pass@k and pass^k for this k (default: the unit's attempts).")
    ] = None,
    confidence: Annotated[Optional[float], typer.Option(  # noqa: UP045
        "--confidence", metavar="C", help="units, experiments: the intervals' confidence (default: [stats] "
        "confidence, 0.95).")] = None,
    store: StoreOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Print sealed rows for scripts and pipelines, worst first."""
    from ..app.project import reading_settings, store_path
    from ..app.query import STATS_TARGETS, query_rows
    from ..reports import formats

    tty = sys.stdout.isatty()
    fmt = fmt or ("table" if tty else "ndjson")
    if fmt not in formats.names():
        raise UsageError(f"--format {fmt!r} is not one of {', '.join(formats.names())}")
    check_not_empty(eval_prefix or (), "--eval")
    level = 0.95
    if target in STATS_TARGETS:
        path, _alpha, level = reading_settings(store, config, confidence=confidence)
    elif confidence is not None:
        raise UsageError(f"--confidence applies to `query units` and `query experiments`, not to `query {target}`.")
    else:
        path = store_path(store, config)
    capped = fmt == "table" and limit is None  # one more row than shown tells that there are more
    with query_rows(path, target, run=run_ref, experiments=experiment or (),
                    eval_prefixes=eval_prefix or (), states=state or (),
                    limit=formats.TABLE_ROWS + 1 if capped else limit, sql=sql, confidence=level, k=k) as rows:
        shown: Iterable[dict[str, Any]] = rows.rows
        more = False
        if capped:  # a table is laid out whole anyway
            every = list(rows.rows)
            shown, more = every[:formats.TABLE_ROWS], len(every) > formats.TABLE_ROWS
        formats.write_rows(sys.stdout, rows.columns, shown, fmt, target=rows.target, tty=tty)
    if more:
        typer.echo(f"only the first {formats.TABLE_ROWS} rows are shown in a table; `--limit N` shows N, "
                   "`--format ndjson` (or json, csv) every row")
