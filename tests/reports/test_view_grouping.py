"""`view` reads its header's outcome groups grouped by SQL (`Store.outcome_rows(in_sql=True)`, on a
second connection in a thread), where every other reader of one run groups them eval by eval in
Python; and it tallies them with the evals whose every attempt passed counted, not listed
(`reports.view.page_tally`). Over random runs (finished and running, reused attempts, every
state, gate, case and pass rule) and the view's filters, the page must hold the groups the
Python grouping gives, in its order, and its header and notes must be those of every group
tallied."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

import pytest

from niceeval_cli.app.view import load_view
from niceeval_cli.reports._tally import RunTally, tally
from niceeval_cli.reports.data import RunPage, ViewFilters
from niceeval_cli.reports.terminal import emit
from niceeval_cli.reports.terminal.run import header_lines
from niceeval_cli.reports.view import eval_notes, page_tally, print_page
from niceeval_cli.reports.viewmodels.run import run_header
from niceeval_cli.store import Store
from tests.support.random_runs import seal_random_run
from tests.support.records import SealedStore
from tests.support.view_builders import plain_console

_FILTERS = (
    ViewFilters(),
    ViewFilters(experiments=("exp/a",)),
    ViewFilters(eval_prefixes=("evals/1", "evals/99")),
    ViewFilters(eval_prefixes=("evals/99",)),  # one eval an experiment: some experiments all counted
    ViewFilters(states=("failed", "gate-failed")),
    ViewFilters(experiments=("exp/b",), states=("passed", "scored", "unrankable")),
)


def _text(page: RunPage) -> str:
    console, buffer = plain_console(120)
    print_page(console, page)
    return buffer.getvalue()


def _header_text(page: RunPage, totals: RunTally) -> str:
    console, buffer = plain_console(120)
    emit.emit_boxed(console, header_lines(run_header(page.run, totals, not_run=page.not_run)))
    return buffer.getvalue()


def _runs(tmp_path: Path, seed: int) -> tuple[Path, list[str]]:
    """Two random runs: one finished, the latest still running (its second reuses attempts)."""
    path = tmp_path / ".niceeval" / "results.db"
    project = SealedStore(path, Store.open(path))
    rng = random.Random(seed)
    earlier: list = []
    try:
        runs = [seal_random_run(project, rng, earlier, passing) for passing in (0.0, 0.6, 0.9)]
        project.finish(runs[0], exit_code=1)
        project.finish(runs[1], exit_code=0)
    finally:
        project.store.close()
    return path, runs


@pytest.mark.parametrize("seed", range(5))
def test_views_header_groups_are_the_python_groupings_and_print_alike(tmp_path: Path, seed: int) -> None:
    path, runs = _runs(tmp_path, seed)
    for run_id in runs:
        for filters in _FILTERS:
            page = load_view(path, run_id, filters)
            assert isinstance(page, RunPage)
            with Store.open(path, readonly=True) as store:
                by_eval = store.outcome_rows(run_id, experiment=list(filters.experiments) or None,
                                             eval_prefix=list(filters.eval_prefixes) or None)
            assert page.groups == by_eval
            assert _text(page) == _text(replace(page, groups=by_eval))


@pytest.mark.parametrize("seed", range(8))
def test_views_header_with_passing_evals_counted_is_the_header_of_every_group(tmp_path: Path, seed: int) -> None:
    path, runs = _runs(tmp_path, seed)
    for run_id in runs:
        for filters in _FILTERS:
            page = load_view(path, run_id, filters)
            assert isinstance(page, RunPage)
            # the run's own order of experiments, and orders that miss some of the groups' experiments
            for order in (page.experiments, ["exp/c"], ["exp/b"], []):
                shown = replace(page, experiments=list(order))
                counted, whole = page_tally(shown), tally(shown.groups, shown.experiments)
                assert run_header(page.run, counted, not_run=page.not_run) == run_header(
                    page.run, whole, not_run=page.not_run)
                assert _header_text(shown, counted) == _header_text(shown, whole)
                assert eval_notes(counted) == eval_notes(whole)
