"""`niceeval judge agreement`: each judge identity's agreement with human labels or another run."""

import sys
from typing import Annotated, Optional

import typer

from ._common import ConfigOpt, StoreOpt, Text, _exit_codes, _Group, _guard, app, command

judge_app = typer.Typer(
    name="judge", help="How far to trust the judge: its decisions set against people's labels.",
    no_args_is_help=True, add_completion=False, rich_markup_mode="markdown", cls=_Group,
)
app.add_typer(judge_app, name="judge", short_help="Judge agreement with human labels (or another run).")

_FORMATS = ("table", "json", "csv", "ndjson")


@command("agreement", on=judge_app, short_help="Accuracy, Cohen's kappa, TPR and TNR per judge identity.",
         epilog="**Examples**\n\n"
                "* `niceeval judge agreement`: every labelled judge result in the store\n"
                "* `niceeval judge agreement --run 01M95G --format json`\n"
                "* `niceeval judge agreement --between RUN_A RUN_B`: RUN_B's judge against RUN_A's\n\n"
                + _exit_codes("judge agreement"))
@_guard
def judge_agreement(
    run_ref: Annotated[Text, typer.Option(
        "--run", metavar="RUN_ID|all", help="Only labelled results of this run (default: all, the whole store).")
    ] = None,
    between: Annotated[Optional[tuple[str, str]], typer.Option(  # noqa: UP045
        "--between", metavar="RUN_A RUN_B", help="RUN_B's judge against RUN_A's (the reference), paired by "
        "original attempt and key, instead of against labels.")] = None,
    fmt: Annotated[str, typer.Option("--format", metavar="FORMAT", help="table, json or csv.")] = "table",
    confidence: Annotated[Optional[float], typer.Option(  # noqa: UP045
        "--confidence", metavar="C", help="The accuracy interval's confidence (default: [stats] confidence, 0.95).")
    ] = None,
    store: StoreOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Per judge identity (model, factory, prompt / scale version, criterion): labelled count,
    accuracy with its Wilson interval, Cohen's kappa, TPR, TNR and the confusion counts."""
    from .._errors import UsageError
    from ..app.agreement import judge_agreement as compute
    from ..app.project import reading_settings
    from ..reports import agreement_output

    if fmt not in _FORMATS:
        raise UsageError(f"--format {fmt!r} is not one of table, json, csv")
    if between is not None and run_ref is not None:
        raise UsageError("--between RUN_A RUN_B names its runs: leave --run out.")
    path, _alpha, level = reading_settings(store, config, confidence=confidence)
    results = compute(path, run=run_ref, between=between, confidence=level)
    agreement_output.write(sys.stdout, results, fmt, between=between is not None, tty=sys.stdout.isatty())
