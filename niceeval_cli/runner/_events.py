"""What the runner tells its audience (progress display, NDJSON, CI lines) as a run goes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from .._stdout import reader_went_away

if TYPE_CHECKING:
    from .._records import AssertionResult, AttemptRecord
    from ..store import RunOutcomeRows
    from ._plan import PlannedSlot, RerunMode


@dataclass(frozen=True)
class SetupFailure:
    """A preflight (judge, adapter, sandbox) that failed: the slots it affects were not dispatched."""

    experiment_id: str
    eval_ids: tuple[str, ...]
    endpoint: str
    model: str | None
    cause: str
    check: str = "judge"  # what failed its preflight: judge, adapter or sandbox


@dataclass(frozen=True)
class PlanTotals:
    """What the plan decided, for the reuse line: slots, reused, and executed slots by reason."""

    slots: int
    reused: int
    reasons: dict[str, int]  # PlanReason value → executed slots
    mode: str  # RerunMode value: "default", "rerun" or "all"
    #: Experiments whose reused results are identified by their configuration only (a network
    #: adapter without `inputs` / `version` / `version_command`): the summary says so once.
    config_only_reused: tuple[str, ...] = ()

    @classmethod
    def of(cls, slots: Sequence[PlannedSlot], mode: RerunMode) -> PlanTotals:
        reasons: dict[str, int] = {}
        config_only: dict[str, None] = {}
        for slot in slots:
            if slot.execute:
                reasons[str(slot.reason)] = reasons.get(str(slot.reason), 0) + 1
            elif slot.shape.config_only:
                config_only[slot.experiment.id] = None
        return cls(len(slots), sum(not s.execute for s in slots), reasons, str(mode.value), tuple(config_only))

    def plus(self, more: PlanTotals) -> PlanTotals:
        """These totals and `more`'s (the slots `run --until-decided` added to the plan)."""
        reasons = dict(self.reasons)
        for reason, n in more.reasons.items():
            reasons[reason] = reasons.get(reason, 0) + n
        config_only = tuple(dict.fromkeys((*self.config_only_reused, *more.config_only_reused)))
        return PlanTotals(self.slots + more.slots, self.reused + more.reused, reasons, self.mode, config_only)



@dataclass(frozen=True)
class RunOutcome:
    """What the runner hands back: the run's verdict (`decide_run` over its sealed rows: exit code,
    counts, slots not run), what only the runner knows (executed, plan, spend, warnings), and the
    rows it decided from (`read`), where the app's one summary read starts."""

    run_id: str | None
    status: str
    exit_code: int
    executed: int = 0
    reused: int = 0
    counts: dict[str, int] = field(default_factory=dict)  # attempt state (and gate-failed) → n
    setup_failures: tuple[SetupFailure, ...] = ()
    dry: bool = False
    planned: int | None = None  # slots the run planned (executed, reused and not run)
    not_run: int = 0  # planned slots that never started (interrupted, blocked by a preflight)
    plan: PlanTotals | None = None  # what the plan decided (None: an outcome made by hand)
    usage_unreported: int = 0  # token counts dropped as out of range (the summary warns)
    replaced_code_points: int = 0  # unencodable code points replaced with U+FFFD before sealing
    #: (reason, n) of the results recorded without deciding (role `record`) that came back
    #: unavailable in the attempts this run executed: no verdict rests on them (the summary says so)
    unavailable_records: tuple[tuple[str, int], ...] = ()
    spent_usd: float | None = None  # reported-or-estimated cost of the attempts this run sealed
    budget_usd: float | None = None  # `--budget`, when given
    uncounted: int = 0  # attempts this run sealed with no reported or estimated cost (`--budget` is blind to them)
    unstarted: tuple[str, ...] = ()  # "experiment · eval#ordinal" of slots never started (budget)
    #: (experiment, eval) → its planned attempts that never started (budget): what could still
    #: change its verdict (`outcomes.settled_verdict`)
    missing: Mapping[tuple[str, str], int] = field(default_factory=dict)
    #: The sealed rows the run was decided from (`Store.run_outcome_rows`: the groups, the evals
    #: counted as passed, the costs); None when it was not decided (dry). Not read a second time.
    read: RunOutcomeRows | None = None


class RunEvents(Protocol):
    """The hooks a run calls, in order: planned, setup_failed, started/sealed per attempt, finished."""

    def planned(self, run_id: str | None, slots: Sequence[PlannedSlot]) -> None: ...
    def setup_failed(self, run_id: str | None, failures: Sequence[SetupFailure]) -> None: ...
    def started(self, run_id: str, slot: PlannedSlot) -> None: ...
    def sealed(
        self, run_id: str, slot: PlannedSlot, attempt: AttemptRecord, results: Sequence[AssertionResult]
    ) -> None: ...
    def finished(self, outcome: RunOutcome) -> None: ...


class RunListener:
    """A listener that hears nothing: subclass it and implement only the hooks you need."""

    def planned(self, run_id: str | None, slots: Sequence[PlannedSlot]) -> None:
        pass

    def setup_failed(self, run_id: str | None, failures: Sequence[SetupFailure]) -> None:
        pass

    def started(self, run_id: str, slot: PlannedSlot) -> None:
        pass

    def sealed(
        self, run_id: str, slot: PlannedSlot, attempt: AttemptRecord, results: Sequence[AssertionResult]
    ) -> None:
        pass

    def finished(self, outcome: RunOutcome) -> None:
        pass

    def reported(self, report: Any) -> None:
        """After the run, what its caller read back for it (`app.run`: a `RunReport`): the
        summary and the JUnit file are written here. The runner itself never calls it."""


NullEvents = RunListener  # tells no one (library use and tests)


class EventRelay:
    """The run's one audience: each event goes to every listener in turn (progress, NDJSON or
    plain lines, the JUnit file, the summary, whatever the caller adds), as pytest calls a hook
    on each plugin. A listener implements the hooks it wants (`RunListener` has them all, doing
    nothing); one it leaves out is not called.

    A listener whose reader went away (BrokenPipeError: `niceeval run | head -3`) is dropped,
    stdout is pointed at /dev/null (`_stdout.reader_went_away`, the one broken-pipe policy), and
    the run goes on for the others: it seals everything and exits with its own code."""

    def __init__(self, *listeners: object) -> None:
        self.listeners = list(listeners)

    def _tell(self, hook: str, *args: Any) -> None:
        for listener in list(self.listeners):
            call = getattr(listener, hook, None)
            if call is None:
                continue
            try:
                call(*args)
            except BrokenPipeError:
                self.listeners.remove(listener)
                reader_went_away()

    def planned(self, run_id: str | None, slots: Sequence[PlannedSlot]) -> None:
        self._tell("planned", run_id, slots)

    def setup_failed(self, run_id: str | None, failures: Sequence[SetupFailure]) -> None:
        self._tell("setup_failed", run_id, failures)

    def started(self, run_id: str, slot: PlannedSlot) -> None:
        self._tell("started", run_id, slot)

    def sealed(
        self, run_id: str, slot: PlannedSlot, attempt: AttemptRecord, results: Sequence[AssertionResult]
    ) -> None:
        self._tell("sealed", run_id, slot, attempt, results)

    def finished(self, outcome: RunOutcome) -> None:
        self._tell("finished", outcome)

    def reported(self, report: Any) -> None:
        self._tell("reported", report)
