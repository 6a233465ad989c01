"""`niceeval regrade`: a sealed run's judge assertions graded again with changed judge settings."""

from typing import Annotated

import typer

from .. import __version__
from .._errors import ExitCode
from ._common import (
    ConfigOpt,
    ExperimentsOpt,
    Int,
    StoreOpt,
    Text,
    _console,
    _exit_codes,
    _flag,
    _guard,
    command,
)

_JUDGE = "Judge settings (laid over each attempt's own)"


@command(
    short_help="Grade a sealed run's judge assertions again (a new run; no system under test).",
    epilog="**Examples**\n\n"
           "* `niceeval regrade --judge-model gpt-4.1`: the latest run's judge results, by another model\n"
           "* `niceeval regrade 01M95G -e models/ --judge-samples 5 --dry`: what would change\n"
           "* `niceeval compare 01M95G 01M97K`: the original against its regrade\n\n" + _exit_codes("regrade"),
)
@_guard
def regrade(
    run_ref: Annotated[Text, typer.Argument(
        metavar="RUN", help="The run (id, or the start of one; default: the latest).", show_default=False)] = None,
    experiment: ExperimentsOpt = None,
    judge_model: Annotated[Text, typer.Option(
        "--judge-model", metavar="M", help="Grade with this judge model.", rich_help_panel=_JUDGE)] = None,
    judge_base_url: Annotated[Text, typer.Option(
        "--judge-base-url", metavar="U", help="At this OpenAI-compatible endpoint.", rich_help_panel=_JUDGE)] = None,
    judge_samples: Annotated[Int, typer.Option(
        "--judge-samples", metavar="N", help="Grading requests per judge assertion (judge.samples).",
        rich_help_panel=_JUDGE)] = None,
    dry: Annotated[bool, _flag("--dry", help="Print what would be regraded and which settings change; "
                                             "write nothing.")] = False,
    skip_missing: Annotated[bool, _flag(
        "--skip-missing", help="Leave out attempts sealed without their judge inputs (an older store) "
                               "instead of refusing.")] = False,
    json_out: Annotated[bool, _flag("--json", help="NDJSON events on stdout instead of human output.",
                                           rich_help_panel="Output")] = False,
    store: StoreOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Grade the judge assertions of a run's sealed attempts again, with changed judge settings.

    The result is a new run (kind `regrade`): each regraded attempt is a new attempt linked to its
    original, its other results copied, its verdict decided again. The system under test is never
    contacted and no eval code runs; the original run is never changed.
    """
    from ..app import regrade as regrade_app
    from ..reports import regrade_output, run_output

    request = regrade_app.build_request(
        run=run_ref, experiments=experiment or (), model=judge_model, base_url=judge_base_url,
        samples=judge_samples, skip_missing=skip_missing, store=store, config=config, version=__version__,
    )
    planned = regrade_app.plan(request)
    console = _console()
    if dry:
        regrade_output.print_dry(console, planned)
        raise typer.Exit(ExitCode.OK)
    events = run_output.events_for(console, json_out)
    listeners: list[object] = [events]
    if not json_out:
        listeners.append(run_output.Summary(console))
    try:
        report = regrade_app.execute(request, planned, listeners, summary=not json_out)
    finally:
        close = getattr(events, "close", None)
        if close is not None:
            close()
    raise typer.Exit(report.outcome.exit_code)
