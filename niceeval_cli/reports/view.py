"""`niceeval view`: a RunPage or AttemptDetail (read by app.view) printed for a person at a terminal."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console

from .._states import AttemptState
from ..stats import DEFAULT_CONFIDENCE
from ..store import count_passed_evals
from ._tally import RunTally, not_run_by_eval, tally
from .data import AttemptDetail, RunPage, ViewFilters
from .terminal import emit as out
from .terminal.attempt import block_lines, collapsed_lines, detail_lines
from .terminal.cost import cost_lines
from .terminal.lines import Line, blank, line
from .terminal.run import header_lines
from .terminal.transcript import transcript_lines
from .viewmodels.attempt import attempt_block, attempt_detail, collapsed_attempt
from .viewmodels.cost import experiment_costs
from .viewmodels.run import run_header, unavailable_records_note
from .viewmodels.text import name
from .viewmodels.transcript import transcript


def print_view(console: Console, page: RunPage | AttemptDetail, *, confidence: float = DEFAULT_CONFIDENCE) -> None:
    if isinstance(page, AttemptDetail):
        out.emit(console, detail_lines(attempt_detail(page.attempt, page.results)))
        lines = transcript_lines(transcript(page.turns, page.results))
        if lines:
            out.emit(console, [blank(), *lines])
    else:
        print_page(console, page, confidence=confidence)


def print_page(console: Console, page: RunPage, *, confidence: float = DEFAULT_CONFIDENCE) -> None:
    filters = filters_text(page.filters)
    totals = page_tally(page)
    header = run_header(page.run, totals, filters=filters, not_run=page.not_run, not_run_slots=page.not_run_slots,
                        confidence=confidence)
    notes = eval_notes(totals)
    out.emit_boxed(console, header_lines(header))
    costs = cost_lines(experiment_costs(page.costs, page.experiments))
    if costs:
        out.emit(console, [blank(), *costs])
    unmeasured = unavailable_records_note(page.unavailable_records, page.run.id)  # the run's, whatever the filters
    if unmeasured is not None:
        out.emit(console, [blank(), line((unmeasured, "yellow"))])
    out.emit(console, [blank()])
    if not page.matching:
        what = "match these filters" if filters else "were sealed in this run"
        out.emit(console, [line((f"No attempts {what}.", "bold"))])
        return
    title = "Attempts, worst first"
    if page.shown < page.matching:
        title += f" ({page.shown} of {page.matching} shown)"
    out.section(console, title)
    for attempt, results in page.expanded:
        note = notes.get((attempt.experiment_id, attempt.eval_id))
        out.emit(console, [*block_lines(attempt_block(attempt, results), note=note), blank()])
    if page.collapsed:
        out.emit(console, [line(("Passed, one line each (--all shows their results):", "dim"))])
        out.emit(console, [*collapsed_lines([collapsed_attempt(a) for a in page.collapsed]), blank()])
    footer: list[Line] = []
    if page.shown < page.matching:
        footer.append(line((
            f"… {page.matching - page.shown} more attempt(s) not shown: narrow with --experiment, --eval or "
            f"--state, or list them all with `niceeval query attempts --run {page.run.id}`", "dim")))
    listed = [a for a, _ in page.expanded] or page.collapsed
    if listed:
        footer.append(line(("One attempt in full (evidence, judge audit, usage, timings): ", "dim"),
                           f"niceeval view @{listed[0].id}"))
    out.emit(console, footer)


def page_tally(page: RunPage) -> RunTally:
    """The page's groups tallied with the evals whose every attempt passed counted, not listed
    (`count_passed_evals`: no eval tally, unit and fold for each of 20 000 passing evals; the
    header reads counted evals as it reads their groups, and no attempt of theirs has a note).
    The experiments come in the order tallying every group gives them: the page's, then any other
    in the groups' order."""
    # a shard group's slots no shard filled: passing so far is not passed
    missing = not_run_by_eval(page.not_run_slots)
    groups, passed = count_passed_evals(page.groups, unsettled=missing)
    order = list(page.experiments)
    known = set(order)
    order += [e for e in dict.fromkeys(g.experiment_id for g in page.groups) if e not in known]
    return tally(groups, order, passed, missing=missing)


def eval_notes(totals: RunTally) -> dict[tuple[str, str], str]:
    """For attempts that did not pass although their eval did (pass_rule any, a rate): say so on
    the attempt's heading, so `view` tells the same story as the exit code."""
    notes = {}
    for experiment in totals.experiments:
        for tally_ in experiment.pass_evals():
            fold = tally_.fold()
            if tally_.attempts > 1 and fold.result is AttemptState.PASSED and fold.passed < tally_.attempts:
                errored = f", {fold.errored} errored, not counted" if fold.errored else ""
                notes[(tally_.experiment_id, tally_.eval_id)] = (
                    f"(its eval passed under pass_rule {tally_.rule}: {fold.passed} of {fold.passed + fold.failed} "
                    f"decided attempts{errored})")
    return notes


def filters_text(filters: ViewFilters) -> str:
    parts: Sequence[str] = [f"--experiment {name(e)}" for e in filters.experiments]
    parts = [*parts, *(f"--eval {name(e)}" for e in filters.eval_prefixes)]
    parts = [*parts, *(f"--state {name(s)}" for s in filters.states)]
    return " ".join(parts)
