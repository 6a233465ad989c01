"""`niceeval compare` and `niceeval report`: a run against another, and the HTML report."""

import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from .._errors import UsageError
from ._common import _SELECT, ConfigOpt, Names, StoreOpt, Text, _console, _exit_codes, _guard, command

_CLASSES = "regressed, fixed, undecided, decided, still-failing, unchanged, added, removed"
ExperimentsPair = Annotated[Optional[tuple[str, str]], typer.Option(  # noqa: UP045
    "--experiments", metavar="A B", help="Compare experiment A (base) with experiment B (new) in one run.",
    rich_help_panel=_SELECT)]
AlphaOpt = Annotated[Optional[float], typer.Option(  # noqa: UP045
    "--alpha", metavar="A", help="Significance level of the tests (default: [stats] alpha, 0.05).")]
ConfidenceOpt = Annotated[Optional[float], typer.Option(  # noqa: UP045
    "--confidence", metavar="C", help="Confidence of every interval (default: [stats] confidence, 0.95).")]


@command(
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
    alpha: AlphaOpt = None,
    confidence: ConfidenceOpt = None,
    store: StoreOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Class every eval of two runs (or two experiments): regressed, fixed, undecided, decided, ...

    Attempts pair by experiment, eval id and case id; repeated attempts compare by their result
    under pass_rule, with both pass counts. Regressions are listed first.
    """
    from ..app.scipy_helper import scipy_beside

    with scipy_beside():  # scipy imports in a helper process while this one reads and pairs
        code = _compare(base, new, experiments, fmt, fail_on, alpha, confidence, store, config)
    raise typer.Exit(code)


def _compare(base: str | None, new: str | None, experiments: tuple[str, str] | None, fmt: str | None,
             fail_on: list[str] | None, alpha: float | None, confidence: float | None, store: Path | None,
             config: Path | None) -> int:
    from ..app import compare as compare_app
    from ..app.project import reading_settings
    from ..reports import compare_output

    gates = compare_app.parse_fail_on(fail_on or ())
    if fmt is not None and fmt not in compare_output.MACHINE_FORMATS:
        raise UsageError(f"--format {fmt!r} is not one of {', '.join(compare_output.MACHINE_FORMATS)}")
    path, level, conf = reading_settings(store, config, alpha=alpha, confidence=confidence)
    result = compare_app.load_comparison(path, base, new, experiments=experiments,
                                         alpha=level, confidence=conf)
    if fmt is None:
        compare_output.print_comparison(_console(), result)
    else:
        compare_output.write_comparison(sys.stdout, result, fmt, tty=sys.stdout.isatty())
    decision = compare_app.gate(result, gates)
    if decision.note:
        _console(stderr=True).print(decision.note, highlight=False, markup=False, soft_wrap=True)
    return int(decision.code)


@command(
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
    alpha: AlphaOpt = None,
    confidence: ConfidenceOpt = None,
    store: StoreOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Write one HTML file: header, experiments side by side, the eval matrix, charts, attempts
    failed first with their assertions and transcripts, filters, and comparisons. Prints its path."""
    from ..app import report as report_app
    from ..app.project import reading_settings
    from ..reports.html import render_report

    path, level, conf = reading_settings(store, config, alpha=alpha, confidence=confidence)
    data = report_app.load_report(path, run_ref, baseline=baseline, experiments=experiments, alpha=level,
                                  confidence=conf)
    written = report_app.save_report(render_report(data), out or report_app.default_path(path, data.run.id))
    typer.echo(str(written))
