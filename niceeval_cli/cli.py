"""The `niceeval` command (typer). Thin: it parses, calls one library function, prints.

Heavy imports (runner, store, rich, pydantic) happen inside the commands so that
`niceeval --version` and `--help` stay fast.
"""

from __future__ import annotations

import functools
import os
import sys
import tempfile
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from . import __version__

if TYPE_CHECKING:
    from .config import ProjectConfig

EXIT_USAGE = 2
EXIT_INTERNAL = 4

app = typer.Typer(
    name="niceeval",
    help="Run evals for AI applications and agents; read honest results back from SQLite.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


class UserError(Exception):
    """A mistake the user can fix: printed as one paragraph, exit code 2."""


def _guard(fn: Callable[..., None]) -> Callable[..., None]:
    """User mistakes → one paragraph on stderr, exit 2; bugs → short message + crash file, exit 4."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        try:
            fn(*args, **kwargs)
        except (typer.Exit, SystemExit):
            raise
        except KeyboardInterrupt:
            typer.echo("niceeval: interrupted; results sealed before this point are kept.", err=True)
            raise typer.Exit(130) from None
        except BrokenPipeError:  # `niceeval query ... | head`: the reader has what it wanted
            from .reports.run_output import silence_stdout

            silence_stdout()
            raise typer.Exit(0) from None
        except Exception as exc:
            if isinstance(exc, _user_error_types()):
                typer.echo(f"niceeval: {exc}", err=True)
                raise typer.Exit(int(getattr(exc, "exit_code", EXIT_USAGE))) from None
            _report_crash(exc)
            raise typer.Exit(EXIT_INTERNAL) from None

    return wrapper


def _report_crash(exc: BaseException) -> None:
    crash = Path(tempfile.gettempdir()) / f"niceeval-crash-{os.getpid()}.txt"
    try:
        crash.write_text(traceback.format_exc(), encoding="utf-8")
        where = f"the traceback is in {crash}"
    except OSError:
        where = "the traceback could not be written"
    typer.echo(
        f"niceeval: internal error ({type(exc).__name__}: {exc}); this is a bug in NiceEval — {where}. "
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
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """NiceEval: run evals, then `niceeval view` to see why something failed."""


# Optional[...] (not `X | None`): typer reads these annotations at runtime on Python 3.10 too.
ConfigOpt = Annotated[Optional[Path], typer.Option("--config", help="Use this niceeval.toml.")]  # noqa: UP045
StoreOpt = Annotated[Optional[Path], typer.Option("--store", help="Use this store file.")]  # noqa: UP045
Names = Optional[list[str]]  # noqa: UP045
Int = Optional[int]  # noqa: UP045
Text = Optional[str]  # noqa: UP045
ExperimentsOpt = Annotated[Names, typer.Option("-e", "--experiment", help="Experiment id or id prefix (repeatable).")]
ExperimentFilter = Annotated[Names, typer.Option("--experiment", help="Only this experiment (repeatable).")]
EvalFilter = Annotated[Names, typer.Option("--eval", help="Only evals with this id prefix (repeatable).")]


def _project(config: Path | None) -> ProjectConfig:
    from .config import load_config, load_credentials

    if config is not None and not config.is_file():
        raise UserError(f"--config {config}: no such file; expected a niceeval.toml")
    project = load_config(config, Path.cwd())
    load_credentials(project.root)
    return project


def _console(stderr: bool = False) -> Any:
    from rich.console import Console

    no_color = bool(os.environ.get("NO_COLOR"))
    return Console(stderr=stderr, no_color=no_color, highlight=False, soft_wrap=True)


@app.command()
@_guard
def run(
    prefixes: Annotated[Names, typer.Argument(help="Only evals whose id starts with one of these.")] = None,
    experiment: ExperimentsOpt = None,
    tag: Annotated[Names, typer.Option("--tag", help="Only evals carrying this tag (repeatable).")] = None,
    attempts: Annotated[Int, typer.Option("--attempts", min=1, help="Attempts per eval.")] = None,
    max_concurrency: Annotated[Int, typer.Option("--max-concurrency", min=1, help="Attempts in flight.")] = None,
    timeout: Annotated[Int, typer.Option("--timeout", min=1, help="Per-attempt timeout in ms.")] = None,
    rerun: Annotated[bool, typer.Option("--rerun", help="Run again what did not pass.")] = False,
    rerun_all: Annotated[bool, typer.Option("--rerun-all", help="Run everything; reuse nothing.")] = False,
    dry: Annotated[bool, typer.Option("--dry", help="Print the plan; run nothing.")] = False,
    json_out: Annotated[bool, typer.Option("--json", help="NDJSON events on stdout.")] = False,
    junit: Annotated[Optional[Path], typer.Option("--junit", help="Also write JUnit XML here.")] = None,  # noqa: UP045
    shard: Annotated[Text, typer.Option("--shard", help="Run only shard K of N of the plan (K/N, e.g. 2/4).")] = None,
    group: Annotated[Text, typer.Option("--group", help="The shard group (default NICEEVAL_RUN_GROUP, else "
                                        "the plan digest).")] = None,
    executor: Annotated[Text, typer.Option("--executor", help="Where attempts run: inprocess (default), "
                                           "ray.")] = None,
    ray_address: Annotated[Text, typer.Option("--ray-address", help="The Ray cluster (default: a local one).")] = None,
    retry_lost: Annotated[bool, typer.Option("--retry-lost", help="Run again an attempt whose Ray worker was "
                                             "lost.")] = False,
    store: StoreOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Run evals: dispatch attempts, evaluate assertions, seal results into the store."""
    from .config import RunOverrides
    from .discovery import discover
    from .reports import run_output
    from .runner import RerunMode, RunRequest

    if rerun and rerun_all:
        raise UserError("--rerun and --rerun-all exclude each other; pick one")
    from .app.scale import executor_settings, shard_settings

    shard_spec, group_id = shard_settings(shard, group, os.environ)
    project = _project(config)
    executor_name, executor_options = executor_settings(project, executor, ray_address, retry_lost)
    evals = discover(project.eval_roots, project.root)
    request = RunRequest(
        project=project,
        evals=evals,
        eval_prefixes=tuple(prefixes or ()),
        experiments=tuple(experiment or ()),
        tags=tuple(tag or ()),
        overrides=RunOverrides(attempts=attempts, max_concurrency=max_concurrency, timeout_ms=timeout),
        mode=RerunMode.ALL if rerun_all else RerunMode.RERUN if rerun else RerunMode.DEFAULT,
        dry=dry,
        store_path=store,
        argv=tuple(sys.argv[1:]),
        version=__version__,
        shard=shard_spec,
        group_id=group_id,
        executor=executor_name,
        executor_options=executor_options,
    )
    console = _console()
    if dry:
        code = run_output.run_dry(request, console, json_out=json_out)
        raise typer.Exit(code)
    outcome = run_output.run_with_output(request, console, json_out=json_out, junit=junit)
    _exit_now_if_threads_linger(outcome.exit_code)
    raise typer.Exit(outcome.exit_code)


def _exit_now_if_threads_linger(code: int) -> None:
    """A plain-function adapter abandoned by a timeout or Ctrl-C may still be running in a
    worker thread; everything is sealed and printed, so exit now instead of waiting for it."""
    import threading

    if _console_script and any(t.name.startswith("niceeval-worker") and t.is_alive() for t in threading.enumerate()):
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


@app.command()
@_guard
def view(
    ref: Annotated[
        Text, typer.Argument(metavar="[RUN_ID | @ATTEMPT_ID]", help="A run (default: the latest) or @attempt.")
    ] = None,
    experiment: ExperimentFilter = None,
    eval_prefix: EvalFilter = None,
    state: Annotated[Names, typer.Option("--state", help="Only attempts in this state (repeatable).")] = None,
    show_all: Annotated[bool, typer.Option("--all", help="Expand passed attempts too.")] = False,
    store: StoreOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Show sealed results: failed and unavailable items first."""
    from .reports import view as view_report

    path = _store_path(store, config)
    view_report.show(
        path, ref, console=_console(), experiments=experiment or (), eval_prefixes=eval_prefix or (),
        states=state or (), expand=show_all,
    )


@app.command()
@_guard
def query(
    target: Annotated[
        str, typer.Argument(metavar="[runs|attempts|assertions]", help="What to list.")
    ] = "assertions",
    run_ref: Annotated[Text, typer.Option("--run", help="Run id or prefix, or `all` (default: latest).")] = None,
    experiment: ExperimentFilter = None,
    eval_prefix: EvalFilter = None,
    state: Annotated[
        Names, typer.Option("--state", help="Only rows in this state (repeatable; for assertions "
                            "`failed` = mismatched + below).")
    ] = None,
    limit: Annotated[Int, typer.Option("--limit", min=1, help="At most N rows.")] = None,
    fmt: Annotated[
        Text, typer.Option("--format", help="json | ndjson | csv | table (default: table on a TTY, else ndjson).")
    ] = None,
    sql: Annotated[Text, typer.Option("--sql", help="Run a read-only SQL statement instead.")] = None,
    store: StoreOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Print sealed rows for scripts and pipelines, worst first."""
    from .reports._formats import FORMATS, write_rows
    from .store import Store

    if target not in ("runs", "attempts", "assertions"):
        raise UserError(f"query target {target!r} is not one of runs, attempts, assertions")
    if fmt is None:
        fmt = "table" if sys.stdout.isatty() else "ndjson"
    if fmt not in FORMATS:
        raise UserError(f"--format {fmt!r} is not one of {', '.join(FORMATS)}")
    path = _store_path(store, config)
    with Store.open(path, readonly=True) as db:
        if sql is not None:
            columns, tuples = db.sql(sql)
            rows = [dict(zip(columns, t, strict=True)) for t in tuples]
        else:
            columns, rows = db.query(
                target, run=run_ref, experiment=experiment or None, eval_prefix=eval_prefix or None,  # type: ignore[arg-type]
                states=state or None, limit=limit,
            )
    write_rows(sys.stdout, columns, rows, fmt, target=None if sql is not None else target)


@app.command()
@_guard
def merge(
    stores: Annotated[list[Path], typer.Argument(metavar="STORE...", help="Stores to merge (shard results).")],
    into: Annotated[Optional[Path], typer.Option("--into", help="The target store (default: the project's).")] = None,  # noqa: UP045
    junit: Annotated[Optional[Path], typer.Option("--junit", help="Also write JUnit XML of the merged run.")] = None,  # noqa: UP045
    exit_code: Annotated[bool, typer.Option("--exit-code", help="Exit with the merged run's exit code.")] = False,
    config: ConfigOpt = None,
) -> None:
    """Merge the sealed results of other stores (CI shards) into one; a shard group reads as one run."""
    from .app.merge import merge_stores
    from .reports import merge_output

    target = into if into is not None else _project(config).store
    report = merge_stores(target, stores)
    if junit is not None and report.merged is not None:
        merge_output.write_merged_junit(report, junit)
    merge_output.show(report, _console())
    raise typer.Exit(report.exit_code if exit_code else 0)


@app.command("list")
@_guard
def list_evals(
    json_out: Annotated[bool, typer.Option("--json", help='Print {"evals": [...], "experiments": [...]}.')] = False,
    config: ConfigOpt = None,
) -> None:
    """List discovered evals and configured experiments."""
    from .reports import listing

    project = _project(config)
    listing.show(project, console=_console(), json_out=json_out)


@app.command()
@_guard
def init() -> None:
    """Write a minimal niceeval.toml and evals/example.py that run as-is (never overwrites)."""
    from .reports import listing

    listing.init_project(Path.cwd(), console=_console())


def _store_path(store: Path | None, config: Path | None) -> Path:
    if store is not None:
        return store
    return _project(config).store


def _user_error_types() -> tuple[type[BaseException], ...]:
    from ._errors import NiceEvalError
    from .config import ConfigError
    from .discovery import DiscoveryError
    from .store import StoreError

    return (UserError, ConfigError, DiscoveryError, StoreError, NiceEvalError)


_console_script = False  # set by main(): only a real process may exit without joining threads


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point (typer handles usage errors: exit 2)."""
    global _console_script
    _console_script = True
    app(args=sys.argv[1:] if argv is None else argv, prog_name="niceeval")


if __name__ == "__main__":  # pragma: no cover
    main()
