"""`niceeval view [RUN_ID | @ATTEMPT_ID]`: read what the page shows (the store opened read-only,
so it works while a run is writing). The header counts come from one grouped query, the page
from the store's severity order, and only the attempts on the page have their results read."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

from .. import outcomes
from .._selectors import selects_any_experiment
from .._states import STATE_FILTERS as STATE_FILTERS  # `view --state` values, read by the CLI from here
from .._states import AttemptState, Derived, GateState
from ..reports.data import AttemptDetail, RunPage, ViewFilters

if TYPE_CHECKING:
    from ..store import GroupOutcome, OutcomeGroup, PlanSlot, RunRead, Store
    from ..store.rows import AssertionRow, AttemptRow, RunRow

DEFAULT_PAGE = 100  # attempts listed by default; the header always counts all of them

_GATE_FILTERS: dict[str, GateState] = {
    Derived.GATE_FAILED: GateState.FAILED, Derived.GATE_UNAVAILABLE: GateState.UNAVAILABLE,
}


def load_view(
    path: Path, ref: str | None, filters: ViewFilters = ViewFilters(), *, expand: bool = False,
    limit: int | None = DEFAULT_PAGE, meanwhile: Callable[[], object] | None = None,
) -> RunPage | AttemptDetail:
    """A run (default: the latest) or, for `@ATTEMPT_ID` (or an attempt id alone), one attempt.

    `meanwhile`: the caller's own work (the CLI imports the printer), done on this thread once
    the page is read while the header's counts are still being read beside it (`_page`)."""
    from ..store import Store, StoreError

    with Store.open(Path(path), readonly=True) as store:
        if ref is not None and ref.strip().startswith("@"):
            return _attempt(store, ref.strip())
        try:
            kind, ident = store.resolve_ref(ref)
        except StoreError:
            if ref is None or not _is_attempt(store, ref):
                raise
            return _attempt(store, ref)  # an attempt id given without its `@`
        if kind == "group":
            return _page(store, ident, lambda: store.read_run(ident), filters, expand=expand, limit=limit,
                         group=True, meanwhile=meanwhile)
        return build_page(store, store.resolve_run(ident), filters, expand=expand, limit=limit, meanwhile=meanwhile)


def _attempt(store: Store, ref: str) -> AttemptDetail:
    attempt = store.resolve_attempt(ref)
    return AttemptDetail(attempt, store.assertions_for_attempt(attempt.id), store.turns(attempt.id))


def _is_attempt(store: Store, ref: str) -> bool:
    from ..store import StoreError

    try:
        store.resolve_attempt(ref)
    except StoreError:
        return False
    return True


def build_page(
    store: Store, run: RunRow, filters: ViewFilters = ViewFilters(), *, expand: bool = False,
    limit: int | None = DEFAULT_PAGE, meanwhile: Callable[[], object] | None = None,
) -> RunPage:
    """Read what the page needs: grouped counts for the header, at most `limit` attempts to list.

    The grouped counts (the longest read: one GROUP BY over every attempt of the run) come from a
    second read-only connection in a thread while this one reads the page and the costs; SQLite
    runs a statement without the GIL, so on two cores the reads overlap (benchmarks/view_large.py).
    Each statement reads its own snapshot either way, as before.
    """
    from ..store import RunRead

    return _page(store, run.id, lambda: RunRead(run, None, None), filters, expand=expand, limit=limit,
                 meanwhile=meanwhile)


def _page(
    store: Store, run_id: str, resolve: Callable[[], RunRead], filters: ViewFilters, *, expand: bool,
    limit: int | None, group: bool = False, meanwhile: Callable[[], object] | None = None,
) -> RunPage:
    """`build_page` for the run `resolve` reads once the page is read. A shard `group`'s verdict
    is the one stored for its current members (store/groups.py), else decided from its outcome
    groups: without experiment or eval filters those are the header's too, so the thread reads
    them and, when none is stored, decides the verdict (`Store.group_outcome`) while this
    connection reads the page and, when some are, the not-run slots (`Store.read_run(outcome=)`)."""
    experiments, prefixes = list(filters.experiments) or None, list(filters.eval_prefixes) or None
    store.check_experiments(run_id, filters.experiments)
    whole_group = group and not (experiments or prefixes)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="niceeval-view") as pool:
        deciding = pool.submit(_group_outcome, store.path, run_id) if whole_group else None
        counting = None if whole_group else pool.submit(_outcome_rows, store.path, run_id, experiments, prefixes)
        rows = store.attempts_for_run(run_id, experiment=experiments, eval_prefix=prefixes,
                                      states=list(filters.states) or None, limit=limit)
        expanded: list[tuple[AttemptRow, list[AssertionRow]]] = []
        collapsed: list[AttemptRow] = []
        for attempt in rows:
            if expand or not outcomes.is_clean(attempt.state, attempt.gate):
                expanded.append((attempt, store.assertions_for_attempt(attempt.id)))
            else:
                collapsed.append(attempt)
        costs = store.costs(run_id, experiment=experiments, eval_prefix=prefixes)
        unmeasured = tuple(store.unavailable_records(run_id))  # the run as a whole: no filter
        if meanwhile is not None:
            meanwhile()
        read = store.read_run(run_id, outcome=deciding.result) if deciding is not None else resolve()
        run = read.run
        missing: tuple[PlanSlot, ...] = ()
        if run.not_run:  # a group's missing shards, a run's slots `--budget` or Ctrl-C kept from starting
            missing = tuple(read.not_run if read.not_run is not None else store.not_run(run.id))
        groups = counting.result() if counting is not None else read.groups or []
    order = [e for e in run.experiments
             if not filters.experiments or selects_any_experiment(filters.experiments, e)]
    matching = sum(g.total for g in groups if _matches(g, filters.states))
    return RunPage(run, groups, order, expanded, collapsed, matching, filters, not_run_count(run), costs,
                   missing, unmeasured)


def _outcome_rows(path: Path, run_id: str, experiments: list[str] | None,
                  prefixes: list[str] | None) -> list[OutcomeGroup]:
    """`Store.outcome_rows` on a connection of its own (a connection stays in its thread), grouped
    by SQL: its sort runs without the GIL, beside the page and costs read on the calling thread."""
    from ..store import Store

    with Store.open(path, readonly=True) as store:
        return store.outcome_rows(run_id, experiment=experiments, eval_prefix=prefixes, in_sql=True)


def _group_outcome(path: Path, group_id: str) -> GroupOutcome | None:
    """`Store.group_outcome` on a connection of its own."""
    from ..store import Store

    with Store.open(path, readonly=True) as store:
        return store.group_outcome(group_id)


def not_run_count(run: RunRow) -> int | None:
    """Planned slots of `run` with no sealed attempt; None for runs recorded without a plan."""
    return run.not_run


def _matches(group: OutcomeGroup, states: Sequence[str]) -> bool:
    if not states:
        return True
    for state in states:
        gate = _GATE_FILTERS.get(state)
        if gate is not None:
            # a failed gate is a definite failure whatever the attempt's state (unrankable too)
            if group.gate is gate and (gate is GateState.FAILED or group.state is AttemptState.SCORED):
                return True
        elif group.state.value == state:
            return True
    return False
