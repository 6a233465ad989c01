"""The `niceeval` command (typer). Thin: it parses, calls one app/ function, hands the result to
reports/ and prints a NiceEvalError as one paragraph with its exit code.

Heavy imports (runner, store, rich, pydantic) happen inside the commands so that
`niceeval --version` and `--help` stay fast.
"""

from __future__ import annotations

import functools
import os
import signal
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
import typer.core
import typer.main

from . import __version__
from ._errors import COMMAND_EXIT_CODES, ExitCode, NiceEvalError, UsageError


class _DeferredCoercion:
    """What typer's RuntimeParam.coerce answers for None (a parameter left at its default
    None), given without building the parameter's pydantic TypeAdapter first. typer builds one
    adapter per parameter of the invoked command and keeps it for the process: for a plain
    `niceeval run` that was ~20 adapters (~1.5 MiB) for values nobody passed. Any other value
    goes to typer's own coercion, built on first use, so errors read as typer words them."""

    @staticmethod
    def coerce(value: Any, param: Any, ctx: Any) -> Any:
        if value is None:
            return () if param.multiple or param.nargs == -1 else None
        return typer.core._TyperParameter.get_runtime_param(param).coerce(value, param=param, ctx=ctx)


_DEFERRED = _DeferredCoercion()


def _built_or_deferred(param: Any) -> Any:
    # getattr: `_runtime_param` is typer's own (0.2x); a typer without it never calls this.
    built = getattr(param, "_runtime_param", None)
    return built if built is not None else _DEFERRED


class _Argument(typer.core.TyperArgument):
    """An argument whose help row shows its metavar only, not typer's `<list[str]>` type label."""

    def get_runtime_param(self) -> Any:
        return _built_or_deferred(self)

    def display_type_rich(self, ctx: Any) -> str | None:
        return None


class _Option(typer.core.TyperOption):
    """An option whose help row shows no type for a flag (typer's `<bool>`, on --help too)."""

    def get_runtime_param(self) -> Any:
        return _built_or_deferred(self)

    def display_type_rich(self, ctx: Any) -> str | None:
        if self.is_flag and self.metavar is None:
            return None
        return super().display_type_rich(ctx)


# typer builds parameters (and the --help option) from these names; the subclasses only change
# how a parameter's type is shown in --help.
typer.main.TyperArgument = _Argument  # type: ignore[misc]
typer.main.TyperOption = _Option  # type: ignore[misc]
typer.core.TyperOption = _Option  # type: ignore[misc]

app = typer.Typer(
    name="niceeval",
    help="Run evals for AI applications and agents; read honest results back from SQLite.\n\n"
         "Start with `niceeval init`, then `niceeval run` and `niceeval view`.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="markdown",
)

def _exit_codes(command: str) -> str:
    """The command's own exit codes for its --help, from the one table (`_errors.COMMAND_EXIT_CODES`)."""
    codes = sorted(COMMAND_EXIT_CODES[command].items())
    return "**Exit codes**\n\n" + "\n".join(f"* {int(code)}: {meaning}" for code, meaning in codes) + "\n"


def _guard(fn: Callable[..., None]) -> Callable[..., None]:
    """User mistakes → one paragraph on stderr and their exit code; bugs → short message + crash file, exit 4."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        try:
            fn(*args, **kwargs)
        except (typer.Exit, SystemExit):
            raise
        except KeyboardInterrupt:
            typer.echo("niceeval: interrupted; results sealed before this point are kept.", err=True)
            raise typer.Exit(ExitCode.INTERRUPTED) from None
        except BrokenPipeError:  # `niceeval query ... | head`: the reader has what it wanted
            from .app.run import silence_stdout

            silence_stdout()
            raise typer.Exit(ExitCode.OK) from None
        except NiceEvalError as error:
            typer.echo(f"niceeval: {error}", err=True)
            raise typer.Exit(error.exit_code) from None
        except Exception as exc:
            _report_crash(exc)
            raise typer.Exit(ExitCode.INTERNAL) from None

    return wrapper


def _report_crash(exc: BaseException) -> None:
    from ._crash import crash_secrets, write_crash_report
    from ._redact import redact

    try:
        where = f"the traceback is in {write_crash_report(traceback.format_exc())}"
    except OSError:
        where = "the traceback could not be written"
    message = redact(f"{type(exc).__name__}: {exc}", crash_secrets())
    typer.echo(
        f"niceeval: internal error ({message}); this is a bug in NiceEval — {where}. "
        "Results sealed before this point are kept in the store.",
        err=True,
    )


def _version(value: bool) -> None:
    if value:
        typer.echo(f"niceeval {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, metavar="",
                           help="Print the version and exit.")
    ] = False,
) -> None:
    """NiceEval: run evals, then `niceeval view` to see why something failed."""


# Optional[...] (not `X | None`): typer reads these annotations at runtime on Python 3.10 too.
_FLAG = ""  # the metavar of a flag: none, not typer's `<bool>`


def _flag(*names: str, **options: Any) -> Any:
    """A boolean flag, shown in --help without a type placeholder."""
    return typer.Option(*names, metavar=_FLAG, **options)

_FILES = "Project"
_SCALE = "Scale"
_SELECT = "Selection"
ConfigOpt = Annotated[Optional[Path], typer.Option(  # noqa: UP045
    "--config", metavar="FILE", help="Use this niceeval.toml.", rich_help_panel=_FILES)]
StoreOpt = Annotated[Optional[Path], typer.Option(  # noqa: UP045
    "--store", metavar="FILE", help="Use this store file.", rich_help_panel=_FILES)]
Names = Optional[list[str]]  # noqa: UP045
Int = Optional[int]  # noqa: UP045
Text = Optional[str]  # noqa: UP045
ExperimentsOpt = Annotated[Names, typer.Option(
    "-e", "--experiment", metavar="ID", help="Experiment id, or a group prefix like `models/` (repeatable).",
    rich_help_panel=_SELECT)]
ExperimentFilter = Annotated[Names, typer.Option(
    "--experiment", metavar="ID", help="Only this experiment (repeatable).", rich_help_panel=_SELECT)]
EvalFilter = Annotated[Names, typer.Option(
    "--eval", metavar="PREFIX", help="Only evals whose id starts with PREFIX (repeatable).", rich_help_panel=_SELECT)]


def _console(stderr: bool = False) -> Any:
    from rich.console import Console

    no_color = bool(os.environ.get("NO_COLOR"))
    return Console(stderr=stderr, no_color=no_color, highlight=False, soft_wrap=True)


@app.command(
    short_help="Run evals and seal their results into the store.",
    epilog="**Examples**\n\n"
           "* `niceeval run`: every eval, every experiment\n"
           "* `niceeval run checkout/ -e models/ --attempts 3`: evals under checkout/, the models/ experiments\n"
           "* `niceeval run --rerun`: run again what did not pass; reuse the rest\n"
           "* `niceeval run --json | jq .event`: NDJSON events for scripts\n"
           "* `niceeval run --junit report.xml`: also write JUnit XML for CI\n\n" + _exit_codes("run"),
)
@_guard
def run(
    prefixes: Annotated[Names, typer.Argument(
        metavar="EVAL_PREFIX", help="Only evals whose id starts with one of these.", show_default=False)] = None,
    experiment: ExperimentsOpt = None,
    tag: Annotated[Names, typer.Option(
        "--tag", metavar="TAG", help="Only evals carrying this tag (repeatable).", rich_help_panel=_SELECT)] = None,
    attempts: Annotated[Int, typer.Option(
        "--attempts", metavar="N", min=1, help="Attempts per eval (overrides the config).")] = None,
    max_concurrency: Annotated[Int, typer.Option(
        "--max-concurrency", metavar="N", min=1, help="Attempts in flight at once.")] = None,
    timeout: Annotated[Int, typer.Option(
        "--timeout", metavar="MS", min=1, help="Per-attempt timeout in milliseconds.")] = None,
    rerun: Annotated[bool, _flag("--rerun", help="Run again what did not pass; reuse what passed.")] = False,
    rerun_all: Annotated[bool, _flag("--rerun-all", help="Run everything; reuse nothing.")] = False,
    dry: Annotated[bool, _flag("--dry", help="Print the plan (execute: why / reuse: which); run nothing.")
                   ] = False,
    json_out: Annotated[bool, _flag("--json", help="NDJSON events on stdout instead of human output.",
                                           rich_help_panel="Output")] = False,
    junit: Annotated[Optional[Path], typer.Option(  # noqa: UP045
        "--junit", metavar="FILE", help="Also write JUnit XML here.", rich_help_panel="Output")] = None,
    budget: Annotated[Optional[float], typer.Option(  # noqa: UP045
        "--budget", metavar="USD", min=0,
        help="Start no new attempt once the run's reported (else estimated) cost reaches USD.")] = None,
    keep_sandbox: Annotated[Text, typer.Option(
        "--keep-sandbox", metavar="failed|all",
        help="Keep the sandbox of failed and errored attempts (failed) or of every attempt (all); "
             "`niceeval sandbox list` shows where.")] = None,
    shard: Annotated[Text, typer.Option(
        "--shard", metavar="K/N", help="Run only shard K of N of the plan (docs/scale.md).",
        rich_help_panel=_SCALE)] = None,
    group: Annotated[Text, typer.Option(
        "--group", metavar="ID", help="The shard group (default: NICEEVAL_RUN_GROUP, else the plan digest).",
        rich_help_panel=_SCALE)] = None,
    executor: Annotated[Text, typer.Option(
        "--executor", metavar="NAME", help="Where attempts run: inprocess (default) or ray.",
        rich_help_panel=_SCALE)] = None,
    ray_address: Annotated[Text, typer.Option(
        "--ray-address", metavar="ADDR", help="The Ray cluster (default: a local one).",
        rich_help_panel=_SCALE)] = None,
    retry_lost: Annotated[bool, _flag(
        "--retry-lost", help="Run again an attempt whose Ray worker or node was lost.",
        rich_help_panel=_SCALE)] = False,
    store: StoreOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Run evals: dispatch attempts, evaluate assertions, seal the results into the store.

    Results whose fingerprint has not changed are reused from earlier runs (`--rerun`,
    `--rerun-all` to run again). Then a summary lists what failed; `niceeval view` shows more.
    """
    from .app import run as run_app
    from .reports import run_output

    collector = _Collector.pause()  # until the run is recorded (see _Collector)
    request = run_app.build_request(
        config=config, prefixes=prefixes or (), experiments=experiment or (), tags=tag or (), attempts=attempts,
        max_concurrency=max_concurrency, timeout_ms=timeout, rerun=rerun, rerun_all=rerun_all, dry=dry,
        store=store, version=__version__, budget_usd=budget, keep_sandbox=keep_sandbox, shard=shard, group=group,
        executor=executor, ray_address=ray_address, retry_lost=retry_lost,
    )
    console = _console()
    if dry:
        from .app.dry import plan_run

        run_output.print_plan(console, plan_run(request), json_out=json_out)
        raise typer.Exit(ExitCode.OK)
    events = run_output.events_for(console, json_out)
    try:
        report = run_app.execute(request, _ReleasingEvents(events, request.evals, collector), summary=not json_out,
                                 junit=junit is not None)
    finally:
        collector.resume()
        close = getattr(events, "close", None)
        if close is not None:
            close()  # a live display must give the terminal back even when the run raised
    if junit is not None and report.sealed is not None:
        from .reports.junit import write_junit

        write_junit(report.sealed, junit)
    if not json_out:
        run_output.print_summary(console, report)
    _exit_now_if_threads_linger(report.outcome.exit_code)
    raise typer.Exit(report.outcome.exit_code)


class _ReleasingEvents:
    """The run's events, forwarded; once the run is planned and recorded, the command's list of
    discovered evals is emptied. The command runs this one request, whose planned slots now hold
    the evals it uses: the discovery records (20 000, say) then go with the slots, not after the
    run's end, where they sat under the peak of deciding and summarising it."""

    def __init__(self, events: Any, evals: object, collector: _Collector) -> None:
        self._events = events
        self._evals = evals
        self._collector = collector

    def planned(self, run_id: str | None, slots: Any) -> None:
        self._events.planned(run_id, slots)
        if run_id is not None and isinstance(self._evals, list):
            self._evals.clear()
        self._collector.resume(freeze=True)

    def setup_failed(self, run_id: str | None, failures: Any) -> None:
        self._events.setup_failed(run_id, failures)

    def started(self, run_id: str, slot: Any) -> None:
        self._events.started(run_id, slot)

    def sealed(self, run_id: str, slot: Any, attempt: Any, results: Any) -> None:
        self._events.sealed(run_id, slot, attempt, results)

    def finished(self, outcome: Any) -> None:
        self._events.finished(outcome)


#: The collector's first threshold while attempts run (CPython's default). Each attempt leaves a
#: few cycles (its context's closures); with everything planned frozen, collecting them often is
#: cheap, and 20 000 objects of them held ~2 MiB at the peak of a 20 000-attempt run.
ATTEMPTS_GC_THRESHOLD = 700


class _Collector:
    """The cyclic collector, paused while a run defines, discovers, plans and records its evals.

    Those phases build what the whole run keeps (definitions, plan slots: 20 000 of each, say)
    and almost no cyclic garbage, yet each collection walks everything built so far: ~50 ms of
    a re-run that reuses 20 000 results. Once the run is recorded, what exists is frozen (never
    walked again) and collection resumes for the attempts, at `ATTEMPTS_GC_THRESHOLD`. Only for
    the console script: a library or test caller's collector is left as it is."""

    def __init__(self, paused: bool) -> None:
        self._paused = paused

    @classmethod
    def pause(cls) -> _Collector:
        import gc

        paused = _console_script and gc.isenabled()
        if paused:
            gc.disable()
        return cls(paused)

    def resume(self, *, freeze: bool = False) -> None:
        if not self._paused:
            return
        import gc

        self._paused = False
        if freeze:
            gc.freeze()
            _, second, third = gc.get_threshold()
            gc.set_threshold(ATTEMPTS_GC_THRESHOLD, second, third)
        gc.enable()


def _exit_now_if_threads_linger(code: int) -> None:
    """A plain-function adapter abandoned by a timeout or Ctrl-C may still be running in a
    worker thread; everything is sealed and printed, so exit now instead of waiting for it."""
    import threading

    if _console_script and any(t.name.startswith("niceeval-worker") and t.is_alive() for t in threading.enumerate()):
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except (BrokenPipeError, ValueError):
            pass
        os._exit(code)


_STATES = "errored, failed, unrankable, gate-failed, gate-unavailable, passed, scored"


@app.command(
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
    from .app.project import stats_settings, store_path
    from .app.view import STATE_FILTERS, ViewFilters, load_view
    from .reports.view import print_view

    unknown = [s for s in state or () if s not in STATE_FILTERS]
    if unknown:
        raise UsageError(f"--state {unknown[0]!r} is not one of {', '.join(STATE_FILTERS)}")
    filters = ViewFilters(experiment or (), eval_prefix or (), state or ())
    _alpha, level = stats_settings(store, config, confidence=confidence)
    print_view(_console(), load_view(store_path(store, config), ref, filters, expand=show_all), confidence=level)


@app.command(
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
    from .app.project import stats_settings, store_path
    from .app.query import STATS_TARGETS, query_rows
    from .reports._formats import FORMATS, write_rows

    tty = sys.stdout.isatty()
    fmt = fmt or ("table" if tty else "ndjson")
    if fmt not in FORMATS:
        raise UsageError(f"--format {fmt!r} is not one of {', '.join(FORMATS)}")
    level = 0.95
    if target in STATS_TARGETS:
        _alpha, level = stats_settings(store, config, confidence=confidence)
    elif confidence is not None:
        raise UsageError(f"--confidence applies to `query units` and `query experiments`, not to `query {target}`.")
    rows = query_rows(store_path(store, config), target, run=run_ref, experiments=experiment or (),
                      eval_prefixes=eval_prefix or (), states=state or (), limit=limit, sql=sql,
                      confidence=level, k=k)
    write_rows(sys.stdout, rows.columns, rows.rows, fmt, target=rows.target, tty=tty)


@app.command(
    short_help="Merge stores (CI shards) into one; a shard group reads as one run.",
    epilog="**Examples**\n\n"
           "* `niceeval merge shard-*/results.db --into merged.db --exit-code`: the merge job of a CI matrix\n"
           "* `niceeval view GROUP --store merged.db`: the group as one run\n\n" + _exit_codes("merge"),
)
@_guard
def merge(
    stores: Annotated[list[Path], typer.Argument(metavar="STORE...", help="Stores to merge (shard results).")],
    into: Annotated[Optional[Path], typer.Option(  # noqa: UP045
        "--into", metavar="FILE", help="The target store (default: the project's).")] = None,
    junit: Annotated[Optional[Path], typer.Option(  # noqa: UP045
        "--junit", metavar="FILE", help="Also write JUnit XML of the merged run.")] = None,
    exit_code: Annotated[bool, _flag("--exit-code", help="Exit with the merged run's exit code.")] = False,
    config: ConfigOpt = None,
) -> None:
    """Copy the sealed rows of each STORE into one store, in one transaction.

    Identical rows are skipped (merging twice changes nothing); the same id with other content
    refuses the whole merge (exit 2). Shard runs of one group then read as one run.
    """
    from .app.merge import merge_stores
    from .app.project import store_path
    from .reports import merge_output

    report = merge_stores(into if into is not None else store_path(None, config), stores, junit=junit is not None)
    if junit is not None and report.sealed is not None:
        merge_output.write_merged_junit(report, junit)
    merge_output.show(report, _console())
    raise typer.Exit(report.exit_code if exit_code else 0)


@app.command("list", short_help="List discovered evals and configured experiments.",
             epilog="**Example**: `niceeval list --json | jq '.evals[].id'`\n\n" + _exit_codes("list"))
@_guard
def list_evals(
    json_out: Annotated[bool, _flag(
        "--json", help='Print {"evals": [...], "experiments": [...], "warnings": [...]}.')] = False,
    cases: Annotated[bool, _flag(
        "--cases", help="One line per case of an eval with cases (its id is `<eval id>[<case id>]`).")] = False,
    config: ConfigOpt = None,
) -> None:
    """List discovered evals and configured experiments (what `niceeval run` would select)."""
    from .app.listing import list_project
    from .app.project import load_project
    from .reports import listing

    listing.show(list_project(load_project(config), cases=cases), console=_console(), json_out=json_out)


@app.command(short_help="Write a minimal project that runs as it is.",
             epilog="Writes niceeval.toml and evals/example.py in the current folder; never overwrites a file.\n\n"
                    + _exit_codes("init"))
@_guard
def init() -> None:
    """Write a minimal niceeval.toml and evals/example.py that run as they are (never overwrites)."""
    from .app.init import init_project
    from .reports import listing

    listing.show_init(init_project(Path.cwd()), console=_console())


_CLASSES = "regressed, fixed, undecided, decided, still-failing, unchanged, added, removed"
ExperimentsPair = Annotated[Optional[tuple[str, str]], typer.Option(  # noqa: UP045
    "--experiments", metavar="A B", help="Compare experiment A (base) with experiment B (new) in one run.",
    rich_help_panel=_SELECT)]


@app.command(
    short_help="What changed between two runs, or between two experiments.",
    epilog="**Examples**\n\n"
           "* `niceeval compare 01J9`: that run (BASE) against the latest run\n"
           "* `niceeval compare BASE NEW --fail-on regressed`: exit 1 if anything regressed (CI)\n"
           "* `niceeval compare --experiments models/a models/b`: is B better than A in the latest run?\n"
           "* `niceeval compare BASE --format csv > changes.csv`\n\n" + _exit_codes("compare"),
)
@_guard
def compare(
    base: Annotated[Text, typer.Argument(
        metavar="BASE", help="The base run id or prefix (with --experiments: the run, default the latest).",
        show_default=False)] = None,
    new: Annotated[Text, typer.Argument(
        metavar="NEW", help="The new run id or prefix (default: the latest run).", show_default=False)] = None,
    experiments: ExperimentsPair = None,
    fmt: Annotated[Text, typer.Option(
        "--format", metavar="FORMAT", help="json, ndjson or csv: one row per pair (default: text).",
        rich_help_panel="Output")] = None,
    fail_on: Annotated[Names, typer.Option(
        "--fail-on", metavar="CLASS", help=f"Exit 1 if any pair is in this class (repeatable): {_CLASSES}; or "
        "significant-regression: exit 1 for a regression larger than the noise, 5 when one could not be told "
        "from it.")
    ] = None,
    alpha: Annotated[Optional[float], typer.Option(  # noqa: UP045
        "--alpha", metavar="A", help="Significance level of the tests (default: [stats] alpha, 0.05).")] = None,
    confidence: Annotated[Optional[float], typer.Option(  # noqa: UP045
        "--confidence", metavar="C", help="Confidence of every interval (default: [stats] confidence, 0.95).")
    ] = None,
    store: StoreOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Class every eval of two runs (or two experiments): regressed, fixed, undecided, decided, ...

    Attempts pair by experiment, eval id and case id; repeated attempts compare by their result
    under pass_rule, with both pass counts. Regressions are listed first.
    """
    from .app import compare as compare_app
    from .app.project import stats_settings, store_path
    from .reports import compare_output

    gates = compare_app.parse_fail_on(fail_on or ())
    if fmt is not None and fmt not in compare_output.MACHINE_FORMATS:
        raise UsageError(f"--format {fmt!r} is not one of {', '.join(compare_output.MACHINE_FORMATS)}")
    level, conf = stats_settings(store, config, alpha=alpha, confidence=confidence)
    result = compare_app.load_comparison(store_path(store, config), base, new, experiments=experiments,
                                         alpha=level, confidence=conf)
    if fmt is None:
        compare_output.print_comparison(_console(), result)
    else:
        compare_output.write_comparison(sys.stdout, result, fmt, tty=sys.stdout.isatty())
    decision = compare_app.gate(result, gates)
    if decision.note:
        _console(stderr=True).print(decision.note, highlight=False, markup=False, soft_wrap=True)
    raise typer.Exit(decision.code)


@app.command(
    short_help="Write a self-contained HTML report of a run.",
    epilog="**Examples**\n\n"
           "* `niceeval report`: the latest run, written to .niceeval/reports/RUN_ID.html\n"
           "* `niceeval report --baseline 01J9 --out report.html`: with what changed since run 01J9\n"
           "* `niceeval report --experiments models/a models/b`: with B against A\n\n"
           "The page loads nothing from anywhere and opens from disk, offline.\n\n" + _exit_codes("report"),
)
@_guard
def report(
    run_ref: Annotated[Text, typer.Argument(
        metavar="RUN_ID", help="The run (default: the latest).", show_default=False)] = None,
    out: Annotated[Optional[Path], typer.Option(  # noqa: UP045
        "--out", metavar="FILE", help="Write the HTML here (default: .niceeval/reports/RUN_ID.html).",
        rich_help_panel="Output")] = None,
    baseline: Annotated[Text, typer.Option(
        "--baseline", metavar="RUN_ID", help="Also show what changed since this run.")] = None,
    experiments: ExperimentsPair = None,
    store: StoreOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Write one HTML file: header, experiments side by side, the eval matrix, charts, attempts
    failed first with their assertions and transcripts, filters, and comparisons. Prints its path."""
    from .app import report as report_app
    from .app.project import store_path
    from .reports.html import render_report

    path = store_path(store, config)
    data = report_app.load_report(path, run_ref, baseline=baseline, experiments=experiments)
    written = report_app.save_report(render_report(data), out or report_app.default_path(path, data.run.id))
    typer.echo(str(written))


sandbox_app = typer.Typer(
    name="sandbox", help="The sandboxes NiceEval left on this machine (kept, orphaned, in use).",
    no_args_is_help=True, add_completion=False, rich_markup_mode="markdown",
)
app.add_typer(sandbox_app, name="sandbox", short_help="List or remove kept sandboxes (`--keep-sandbox`).")


@sandbox_app.command("list", short_help="Show kept, orphaned and in-use sandboxes.",
                     epilog=_exit_codes("sandbox list"))
@_guard
def sandbox_list(
    json_out: Annotated[bool, _flag("--json", help="Print a JSON list.")] = False,
) -> None:
    """Show every local workspace and container NiceEval left here, with its run, attempt and eval."""
    from .app.sandbox import list_kept
    from .reports import sandboxes

    sandboxes.show(list_kept(), console=_console(), json_out=json_out)


@sandbox_app.command("prune", short_help="Remove kept and orphaned sandboxes (never one in use).",
                     epilog=_exit_codes("sandbox prune"))
@_guard
def sandbox_prune(
    json_out: Annotated[bool, _flag("--json", help="Print a JSON list of what was removed.")] = False,
) -> None:
    """Remove the kept and orphaned sandboxes; one whose run is still going is left alone."""
    from .app.sandbox import prune_kept
    from .reports import sandboxes

    sandboxes.show(prune_kept(), console=_console(), removed=True, json_out=json_out)


_console_script = False  # set by main(): only a real process may exit without joining threads


def _terminate_as_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point (typer handles usage errors: exit 2)."""
    global _console_script
    _console_script = True
    # SIGTERM during start-up (config, discovery, planning: before the run loop installs its own
    # handlers) ends the command like Ctrl-C does: exit 130, never rc 143 halfway through a write.
    signal.signal(signal.SIGTERM, _terminate_as_interrupt)
    _tune_gc()
    app(args=sys.argv[1:] if argv is None else argv, prog_name="niceeval")


#: The cyclic collector's first threshold for a command (CPython's default is 700). A run makes
#: millions of short-lived objects and few cycles; collecting every 700 allocations cost a tenth
#: of a re-run of 20 000 reused evals (benchmarks/floors.py reuse), for ~1 MiB it saves.
GC_THRESHOLD = 20_000


def _tune_gc() -> None:
    """What is loaded at start-up lives for the whole command: keep the collector off it."""
    import gc

    gc.freeze()
    _, second, third = gc.get_threshold()
    gc.set_threshold(GC_THRESHOLD, second, third)


if __name__ == "__main__":  # pragma: no cover
    main()
