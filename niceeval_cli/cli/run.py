"""`niceeval run`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from .. import __version__
from .._errors import ExitCode
from . import _common
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
    from ..app import run as run_app
    from ..reports import run_output

    collector = _Collector.pause()  # until the run is recorded (see _Collector)
    request = run_app.build_request(
        config=config, prefixes=prefixes or (), experiments=experiment or (), tags=tag or (), attempts=attempts,
        max_concurrency=max_concurrency, timeout_ms=timeout, rerun=rerun, rerun_all=rerun_all, dry=dry,
        store=store, version=__version__, budget_usd=budget, keep_sandbox=keep_sandbox, shard=shard, group=group,
        executor=executor, ray_address=ray_address, retry_lost=retry_lost,
    )
    console = _console()
    if dry:
        from ..app.dry import plan_run

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
        from ..reports.junit import write_junit

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

        paused = _common._console_script and gc.isenabled()
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

