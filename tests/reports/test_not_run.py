"""Issue 9.15 (display): an interrupted run says how many planned slots were not run."""

from __future__ import annotations

from niceeval_cli._states import AttemptState, RunStatus
from niceeval_cli.app.run import RunReport, read_sealed
from niceeval_cli.reports.run_output import summary_lines
from niceeval_cli.reports.terminal.lines import plain
from niceeval_cli.reports.terminal.run import header_lines
from niceeval_cli.reports.viewmodels.run import run_header
from niceeval_cli.runner import PlanTotals, RunOutcome
from tests.support.view_builders import Runs


def _interrupted(runs: Runs) -> str:
    run = runs.begin()
    for ordinal in range(4):
        runs.seal(runs.attempt(run, "e/one", AttemptState.PASSED, ordinal=ordinal))
    runs.finish(run, 130, status=RunStatus.INTERRUPTED)
    return run


def test_the_summary_of_an_interrupted_run_says_how_many_planned_slots_were_not_run(runs: Runs) -> None:
    run = _interrupted(runs)
    sealed = read_sealed(runs.store, run)
    report = RunReport(RunOutcome(run, "interrupted", 130, plan=PlanTotals(20, 0, {"new": 20}, "default")), sealed, 16)
    text = plain(summary_lines(report))
    assert "exit 130 (interrupted)" in text
    assert "16 of 20 planned slots were not run" in text


def test_the_view_header_shows_not_run_when_known_and_nothing_when_unknown(runs: Runs) -> None:
    from niceeval_cli.reports._tally import tally

    run = _interrupted(runs)
    row = runs.store.resolve_run(run)
    totals = tally(runs.store.outcome_rows(run), row.experiments)
    assert "16 of 20 planned slots were not run" in plain(header_lines(run_header(row, totals, not_run=16)))
    assert "planned slots" not in plain(header_lines(run_header(row, totals, not_run=None)))
