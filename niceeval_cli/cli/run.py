"""`niceeval run`."""

from pathlib import Path
from typing import Annotated, Optional

import typer

from .. import __version__
from .._bounds import MAX_ATTEMPTS
from .._errors import ExitCode
from ._common import (
    _SCALE,
    _SELECT,
    ConfigOpt,
    ExperimentsOpt,
    Int,
    Names,
    StoreOpt,
    Text,
    _console,
    _exit_codes,
    _exit_now_if_threads_linger,
    _flag,
    _guard,
    command,
)


@command(
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
        "--attempts", metavar="N", min=1,
        help=f"Attempts per eval, at most {MAX_ATTEMPTS} (overrides the config).")] = None,
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
        "--budget", metavar="USD",
        help="Start no new attempt once the run's reported (else estimated) cost reaches USD.")] = None,
    until_decided: Annotated[bool, _flag(
        "--until-decided",
        help="Give an eval with a numeric pass_rule more attempts while its interval contains the rule "
             "(docs/statistics.md).")] = False,
    max_attempts: Annotated[Int, typer.Option(
        "--max-attempts", metavar="M", min=1,
        help="With --until-decided: add attempts to an eval only while it has fewer than M (default: [run] "
             "max_attempts, 20); its configured attempts all run, even more than M.")] = None,
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
    from .._stdout import json_only
    from ..app import run as run_app
    from ..reports import run_output

    with json_only(json_out) as out:  # with --json, what eval code prints goes to stderr
        request = run_app.build_request(
            config=config, prefixes=prefixes or (), experiments=experiment or (), tags=tag or (), attempts=attempts,
            max_concurrency=max_concurrency, timeout_ms=timeout, rerun=rerun, rerun_all=rerun_all, dry=dry,
            store=store, version=__version__, budget_usd=budget, keep_sandbox=keep_sandbox, shard=shard,
            group=group, executor=executor, ray_address=ray_address, retry_lost=retry_lost,
            until_decided=until_decided, max_attempts=max_attempts,
        )
        console = _console(file=out)  # the real stdout, whatever eval code does to sys.stdout
        if dry:
            from ..app.dry import plan_run

            deciding = request.until_decided
            run_output.print_plan(console, plan_run(request), json_out=json_out, stream=out,
                                  max_attempts=deciding.max_attempts if deciding is not None else None)
            raise typer.Exit(ExitCode.OK)
        events = run_output.events_for(console, json_out, out)
        listeners: list[object] = [events]
        if junit is not None:
            from ..reports.junit import JunitFile

            listeners.append(JunitFile(junit))
        if not json_out:
            listeners.append(run_output.Summary(console))
        try:
            report = run_app.execute(request, listeners, summary=not json_out, junit=junit is not None)
        finally:
            close = getattr(events, "close", None)
            if close is not None:
                close()  # a live display must give the terminal back even when the run raised
    _exit_now_if_threads_linger(report.outcome.exit_code)
    raise typer.Exit(report.outcome.exit_code)
