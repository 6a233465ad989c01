"""What the runner tells its audience (progress display, NDJSON, CI lines) as a run goes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from .._records import AssertionResult, AttemptRecord
    from ..outcomes import RunDecision
    from ..store import OutcomeGroup, PassedEvals
    from ._plan import PlannedSlot


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
class RunOutcome:
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
    plan_reasons: dict[str, int] = field(default_factory=dict)  # PlanReason → slots (why not reused)
    usage_unreported: int = 0  # token counts dropped as out of range (the summary warns)
    replaced_code_points: int = 0  # unencodable code points replaced with U+FFFD before sealing
    decision: RunDecision | None = None  # outcomes.decide_run over the run's sealed rows (no per-eval `evals`)
    spent_usd: float | None = None  # reported-or-estimated cost of the attempts this run sealed
    budget_usd: float | None = None  # `--budget`, when given
    unstarted: tuple[str, ...] = ()  # "experiment · eval#ordinal" of slots never started (budget)
    groups: tuple[OutcomeGroup, ...] = ()  # the sealed rows it was decided from (the summary reuses them) ...
    passed_evals: tuple[PassedEvals, ...] = ()  # ... but for the evals whose every attempt passed: counted
    costs: list[dict[str, Any]] = field(default_factory=list)  # read with them: cost per experiment (Store.costs)


class RunEvents(Protocol):
    def planned(self, run_id: str | None, slots: Sequence[PlannedSlot]) -> None: ...
    def setup_failed(self, run_id: str | None, failures: Sequence[SetupFailure]) -> None: ...
    def started(self, run_id: str, slot: PlannedSlot) -> None: ...
    def sealed(
        self, run_id: str, slot: PlannedSlot, attempt: AttemptRecord, results: Sequence[AssertionResult]
    ) -> None: ...
    def finished(self, outcome: RunOutcome) -> None: ...


class NullEvents:
    """Tells no one (library use and tests)."""

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
