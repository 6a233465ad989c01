"""`niceeval view [RUN_ID | @ATTEMPT_ID]`: sealed results, worst first, for a person at a terminal.

Reads only the sealed rows (the store opened read-only, so it works while a run is writing):
the header counts come from one grouped query, the page from the store's severity order, and
only the attempts on the page have their assertion results read.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from ..store import AttemptRow, OutcomeGroup, RunRow, Store, StoreError
from . import _out
from ._header import run_lines
from ._render import Line, attempt_lines, blank, collapsed_lines, detail_lines, line, name
from ._tally import RunTally, attempt_word, is_ok, tally

DEFAULT_PAGE = 100  # attempts listed by default; the header always counts all of them

_GATE_FILTER_WORDS = {"gate-failed": "gate failed", "gate-unavailable": "gate unavailable"}


@dataclass(frozen=True)
class RunPage:
    """What `view` shows for a run: header lines, the listed attempts, and what was left out."""

    run: RunRow
    tally: RunTally
    expanded: list[tuple[AttemptRow, list[Line]]]
    collapsed: list[AttemptRow]
    matching: int  # attempts matching the filters (the page shows at most `limit` of them)

    @property
    def shown(self) -> int:
        return len(self.expanded) + len(self.collapsed)


def show(
    path: Path,
    ref: str | None,
    *,
    console: Console,
    experiments: Sequence[str] = (),
    eval_prefixes: Sequence[str] = (),
    states: Sequence[str] = (),
    expand: bool = False,
    limit: int | None = DEFAULT_PAGE,
) -> None:
    """Print a run (default: the latest) or, for `@ATTEMPT_ID`, one attempt in full."""
    with Store.open(Path(path), readonly=True) as store:
        if ref is not None and ref.strip().startswith("@"):
            show_attempt(store, ref.strip(), console=console)
            return
        try:
            run = store.resolve_run(ref)
        except StoreError:
            if ref is None or not _is_attempt(store, ref):
                raise
            show_attempt(store, ref, console=console)  # an attempt id given without its `@`
            return
        page = build_page(store, run, experiments=experiments, eval_prefixes=eval_prefixes, states=states,
                          expand=expand, limit=limit)
        print_page(console, page, filters=_filters_text(experiments, eval_prefixes, states))


def _is_attempt(store: Store, ref: str) -> bool:
    try:
        store.resolve_attempt(ref)
    except StoreError:
        return False
    return True


def show_attempt(store: Store, ref: str, *, console: Console) -> None:
    attempt = store.resolve_attempt(ref)
    results = store.assertions_for_attempt(attempt.id)
    _out.emit(console, detail_lines(attempt, results))


def build_page(
    store: Store,
    run: RunRow,
    *,
    experiments: Sequence[str] = (),
    eval_prefixes: Sequence[str] = (),
    states: Sequence[str] = (),
    expand: bool = False,
    limit: int | None = DEFAULT_PAGE,
) -> RunPage:
    """Read what the page needs: grouped counts for the header, at most `limit` attempts to list."""
    groups = store.outcome_rows(run.id, experiment=list(experiments) or None,
                                eval_prefix=list(eval_prefixes) or None)
    order = [e for e in run.experiments if not experiments or any(_selects(p, e) for p in experiments)]
    run_tally = tally(groups, order)
    rows = store.attempts_for_run(
        run.id, experiment=list(experiments) or None, eval_prefix=list(eval_prefixes) or None,
        states=list(states) or None, limit=None if limit is None else limit,
    )
    expanded: list[tuple[AttemptRow, list[Line]]] = []
    collapsed: list[AttemptRow] = []
    for attempt in rows:
        if expand or not is_ok(attempt.state, attempt.gate):
            results = store.assertions_for_attempt(attempt.id)
            expanded.append((attempt, attempt_lines(attempt, results)))
        else:
            collapsed.append(attempt)
    matching = sum(g.total for g in groups if _matches(g, states))
    return RunPage(run, run_tally, expanded, collapsed, matching)


def _selects(pattern: str, experiment_id: str) -> bool:
    return experiment_id == pattern or (pattern.endswith("/") and experiment_id.startswith(pattern))


def _matches(group: OutcomeGroup, states: Sequence[str]) -> bool:
    if not states:
        return True
    word = attempt_word(group.state, group.gate)
    return any(_GATE_FILTER_WORDS.get(s) == word or group.state.value == s for s in states)


def print_page(console: Console, page: RunPage, *, filters: str = "") -> None:
    _out.emit_boxed(console, run_lines(page.run, page.tally, filters=filters))
    _out.emit(console, [blank()])
    if not page.matching:
        what = "match these filters" if filters else "were sealed in this run"
        _out.emit(console, [line((f"No attempts {what}.", "bold"))])
        return
    title = "Attempts, worst first"
    if page.shown < page.matching:
        title += f" ({page.shown} of {page.matching} shown)"
    _out.section(console, title)
    for _, lines in page.expanded:
        _out.emit(console, [*lines, blank()])
    if page.collapsed:
        _out.emit(console, [line(("Passed, one line each (--all shows their results):", "dim"))])
        _out.emit(console, [*collapsed_lines(page.collapsed), blank()])
    footer: list[Line] = []
    if page.shown < page.matching:
        footer.append(line((
            f"… {page.matching - page.shown} more attempt(s) not shown: narrow with --experiment, --eval or "
            f"--state, or list them all with `niceeval query attempts --run {page.run.id}`", "dim")))
    listed = [a for a, _ in page.expanded] or page.collapsed
    if listed:
        footer.append(line(("One attempt in full (evidence, judge audit, usage, timings): ", "dim"),
                           f"niceeval view @{listed[0].id}"))
    _out.emit(console, footer)


def _filters_text(experiments: Sequence[str], eval_prefixes: Sequence[str], states: Sequence[str]) -> str:
    parts = [f"--experiment {name(e)}" for e in experiments]
    parts += [f"--eval {name(e)}" for e in eval_prefixes]
    parts += [f"--state {name(s)}" for s in states]
    return " ".join(parts)

