"""`view` reads its header's outcome groups grouped by SQL (`Store.outcome_rows(in_sql=True)`, on a
second connection in a thread); every other reader of one run groups them eval by eval in Python.
Over random runs (finished and running, reused attempts, every state, gate, case and pass rule)
and the view's filters, the page must hold the same groups in the same order as the Python
grouping gives, and print the same text from them."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

import pytest

from niceeval_cli.app.view import load_view
from niceeval_cli.reports.data import RunPage, ViewFilters
from niceeval_cli.reports.view import print_page
from niceeval_cli.store import Store
from tests.support.random_runs import seal_random_run
from tests.support.records import SealedStore
from tests.support.view_builders import plain_console

_FILTERS = (
    ViewFilters(),
    ViewFilters(experiments=("exp/a",)),
    ViewFilters(eval_prefixes=("evals/1", "evals/99")),
    ViewFilters(states=("failed", "gate-failed")),
    ViewFilters(experiments=("exp/b",), states=("passed", "scored", "unrankable")),
)


def _text(page: RunPage) -> str:
    console, buffer = plain_console(120)
    print_page(console, page)
    return buffer.getvalue()


@pytest.mark.parametrize("seed", range(5))
def test_views_header_groups_are_the_python_groupings_and_print_alike(tmp_path: Path, seed: int) -> None:
    path = tmp_path / ".niceeval" / "results.db"
    project = SealedStore(path, Store.open(path))
    rng = random.Random(seed)
    earlier: list = []
    try:
        runs = [seal_random_run(project, rng, earlier, passing) for passing in (0.0, 0.6)]
        project.finish(runs[0], exit_code=1)  # one finished run, and the latest still running
    finally:
        project.store.close()
    for run_id in runs:
        for filters in _FILTERS:
            page = load_view(path, run_id, filters)
            assert isinstance(page, RunPage)
            with Store.open(path, readonly=True) as store:
                by_eval = store.outcome_rows(run_id, experiment=list(filters.experiments) or None,
                                             eval_prefix=list(filters.eval_prefixes) or None)
            assert page.groups == by_eval
            assert _text(page) == _text(replace(page, groups=by_eval))
