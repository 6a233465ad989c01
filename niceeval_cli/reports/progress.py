"""`niceeval run` in a TTY: one live progress bar per experiment with its outcome counts.

The runner calls these RunEvents from its event loop, so each call only updates numbers under
rich's lock; rich's own refresh thread redraws at most `REFRESH_PER_SECOND` times a second. A
run of 10 000 attempts therefore costs 10 000 dictionary updates, not 10 000 redraws. When the
run ends the bars stay on screen as the final state (not transient), then the summary follows.

Each line fits the terminal (80 columns included): zero counts are left out, words are
abbreviated when the full ones do not fit, and an experiment none of whose attempts has started
shows "waiting" (no spinner, no clock).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from types import TracebackType
from typing import TYPE_CHECKING

from rich.cells import cell_len
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    SpinnerColumn,
    Task,
    TaskID,
    TimeElapsedColumn,
)
from rich.table import Column
from rich.text import Text

from .._states import AttemptState, Derived, GateState, PlanReason
from ._tally import attempt_word
from .terminal.lines import STYLES
from .viewmodels.text import name

if TYPE_CHECKING:
    from .._records import AssertionResult, AttemptRecord
    from ..runner import PlannedSlot, RunOutcome, SetupFailure

REFRESH_PER_SECOND = 10
BAR_WIDTH = 10
NAME_WIDTH = 16  # cells of the experiment id (longer ids end in "…")
_REUSED = PlanReason.REUSED.value
#: The report's words (`_states.ATTEMPT_WORDS`) in the order cli.md lists them ("counts of passed /
#: failed / errored / scored"), then what did not run; each with its short form for a narrow line.
_WORDS_SHORT = {
    AttemptState.PASSED.value: "ok", AttemptState.FAILED.value: "fail", AttemptState.ERRORED.value: "err",
    AttemptState.SCORED.value: "scored", AttemptState.UNRANKABLE.value: "unrk", Derived.GATE_FAILED.label: "gate✗",
    Derived.UNRANKABLE_GATE_FAILED.label: "unrk gate✗", Derived.ERRORED_GATE_FAILED.label: "err gate✗",
    Derived.GATE_UNAVAILABLE.label: "gate?", _REUSED: "reused", Derived.NOT_DISPATCHED.label: "skip",
}
#: In this order; a zero count is left out.
WORDS = tuple(_WORDS_SHORT)
#: The same words when the full ones do not fit the line.
SHORT = _WORDS_SHORT
#: Cells the other columns take: spinner 1, name, bar, "1234/1234", clock "0:00:00", and the gaps.
_FIXED = 1 + NAME_WIDTH + BAR_WIDTH + 9 + 7 + 5


class _Spinner(SpinnerColumn):
    """No spinner for an experiment that has not started."""

    def render(self, task: Task) -> Text:
        if not task.started:
            return Text(" ")
        rendered = super().render(task)
        return rendered if isinstance(rendered, Text) else Text("•")


class _Clock(TimeElapsedColumn):
    """`waiting` until the experiment's first attempt starts, then the time since."""

    def render(self, task: Task) -> Text:
        if not task.started:
            return Text("waiting", style="dim")
        return super().render(task)


class _Name(ProgressColumn):
    """The experiment id as plain Text (never parsed as rich markup)."""

    def render(self, task: Task) -> Text:
        return Text(task.description, style="bold", no_wrap=True, overflow="ellipsis")


def counts_text(counts: Counter[str], width: int) -> Text:
    """Non-zero counts in `width` cells: full words if they fit, else abbreviated, else cut with "…"."""
    present = [(w, counts[w]) for w in WORDS if counts.get(w, 0)]
    for words, gap in (({w: w for w in WORDS}, ", "), (SHORT, " ")):
        parts = [f"{n} {words[w]}" for w, n in present]
        if cell_len(gap.join(parts)) <= width:
            break
    text = Text(no_wrap=True, overflow="ellipsis")
    for (word, _), part in zip(present, parts, strict=True):
        if text:
            text.append(gap, style="dim")
        text.append(part, style=STYLES.get(word, ""))
    text.truncate(max(width, 1), overflow="ellipsis")
    return text


class _Counts(ProgressColumn):
    def __init__(self, console: Console) -> None:
        super().__init__()
        self.console = console

    def render(self, task: Task) -> Text:
        counts: Counter[str] = task.fields.get("counts", Counter())
        return counts_text(counts, max(10, self.console.width - _FIXED))


class LiveProgress:
    """RunEvents for a terminal: progress per experiment; call `close()` (idempotent) at the end."""

    def __init__(self, console: Console, *, refresh_per_second: float = REFRESH_PER_SECOND) -> None:
        self.console = console
        self.progress = Progress(
            _Spinner(finished_text="•"), _Name(table_column=Column(width=NAME_WIDTH, no_wrap=True)),
            BarColumn(bar_width=BAR_WIDTH), MofNCompleteColumn(), _Clock(), _Counts(console),
            console=console, refresh_per_second=refresh_per_second, transient=False, auto_refresh=True,
        )
        self._tasks: dict[str, TaskID] = {}
        self._counts: dict[str, Counter[str]] = {}
        self._slots: Counter[tuple[str, str]] = Counter()
        self._started: set[TaskID] = set()
        self._live = False

    # ── RunEvents ──────────────────────────────────────────────────────────────────────

    def planned(self, run_id: str | None, slots: Sequence[PlannedSlot]) -> None:
        by_experiment: dict[str, list[PlannedSlot]] = {}
        for slot in slots:
            by_experiment.setdefault(slot.experiment.id, []).append(slot)
            self._slots[(slot.experiment.id, slot.eval.id)] += 1
        for experiment_id, planned in by_experiment.items():
            counts: Counter[str] = Counter()
            for slot in planned:
                if not slot.execute and slot.reuse_state is not None:
                    counts[_word(slot.reuse_state, slot.reuse_gate)] += 1
                    counts[_REUSED] += 1
            self._counts[experiment_id] = counts
            self._tasks[experiment_id] = self.progress.add_task(
                name(experiment_id, 60), total=len(planned), completed=counts[_REUSED], counts=counts,
                start=counts[_REUSED] == len(planned),  # all reused: done at once; else waiting until one starts
            )
        if not self._live:
            self.progress.start()
            self._live = True

    def setup_failed(self, run_id: str | None, failures: Sequence[SetupFailure]) -> None:
        for failure in failures:
            skipped = sum(self._slots[(failure.experiment_id, e)] for e in failure.eval_ids)
            task = self._tasks.get(failure.experiment_id)
            if task is None:
                continue
            counts = self._counts[failure.experiment_id]
            counts[Derived.NOT_DISPATCHED.label] += skipped
            total = self.progress.tasks[_index(self.progress, task)].total or 0
            self.progress.update(task, total=max(0, total - skipped), counts=counts)
            self.progress.console.print(Text(
                f"setup error: {failure.check} preflight failed for {name(failure.experiment_id)} "
                f"({name(failure.endpoint)}): {name(failure.cause, 200)}; {skipped} attempt(s) not dispatched",
                style="red",
            ))

    def started(self, run_id: str, slot: PlannedSlot) -> None:
        """The experiment's first start ends its "waiting"; the bar moves when an attempt is sealed."""
        task = self._tasks.get(slot.experiment.id)
        if task is not None and task not in self._started:
            self._started.add(task)
            self.progress.start_task(task)

    def sealed(
        self, run_id: str, slot: PlannedSlot, attempt: AttemptRecord, results: Sequence[AssertionResult]
    ) -> None:
        experiment_id = slot.experiment.id
        counts = self._counts.get(experiment_id)
        task = self._tasks.get(experiment_id)
        if counts is None or task is None:
            return
        if task not in self._started:
            self._started.add(task)
            self.progress.start_task(task)
        counts[_word(attempt.state, attempt.gate)] += 1
        self.progress.update(task, advance=1, counts=counts)

    def finished(self, outcome: RunOutcome) -> None:
        self.close()

    # ── lifetime ───────────────────────────────────────────────────────────────────────

    def close(self) -> None:
        """Stop the live display (leaving its last frame); safe to call more than once."""
        if self._live:
            self._live = False
            self.progress.stop()

    def __enter__(self) -> LiveProgress:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def _word(state: AttemptState | str, gate: GateState | str | None) -> str:
    return attempt_word(state, gate)


def _index(progress: Progress, task: TaskID) -> int:
    return next(i for i, t in enumerate(progress.tasks) if t.id == task)
