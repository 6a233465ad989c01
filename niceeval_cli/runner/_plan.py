"""Planning: which slots a run has, and for each whether it executes (and why) or reuses."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any

from .._states import AttemptState, GateState, PlanReason

if TYPE_CHECKING:
    from ..authoring import Adapter
    from ..config import ExperimentConfig, SlotSettings
    from ..discovery import DiscoveredEval


class RerunMode(str, Enum):
    DEFAULT = "default"
    RERUN = "rerun"  # run again what did not pass
    ALL = "all"  # run everything


@dataclass(frozen=True, slots=True)
class PlannedSlot:
    experiment: ExperimentConfig
    eval: DiscoveredEval
    ordinal: int
    settings: SlotSettings
    adapter: Adapter | None
    fingerprint: str
    fingerprint_json: str  # canonical JSON of the parts, stored on the attempt
    reason: PlanReason
    reuse_attempt_id: str | None = None
    reuse_run_id: str | None = None
    reuse_state: str | None = None
    reuse_gate: str | None = None
    changed: tuple[str, ...] = field(default=())

    @property
    def execute(self) -> bool:
        return self.reuse_attempt_id is None

    @property
    def label(self) -> str:
        return f"{self.experiment.id} · {self.eval.id}#{self.ordinal}"


@dataclass(frozen=True)
class PreviousAttempt:
    """What reuse needs of the latest sealed attempt of a slot."""

    id: str
    run_id: str
    state: str
    gate: str | None
    fingerprint: str
    fingerprint_json: str  # parsed only when the fingerprint changed (to name the changed parts)
    duration_ms: float


def decide(
    previous: PreviousAttempt | None,
    fingerprint: str,
    parts: dict[str, Any],
    timeout_ms: int | None,
    mode: RerunMode,
) -> tuple[PlanReason, tuple[str, ...]]:
    """Why a slot executes, or PlanReason.REUSED (config.md, "Reuse")."""
    from .._fingerprint import changed_parts

    if previous is None:
        return PlanReason.NEW, ()
    if mode is RerunMode.ALL:
        return PlanReason.RERUN, ()
    if previous.fingerprint != fingerprint:
        old_parts = json.loads(previous.fingerprint_json)
        return PlanReason.FINGERPRINT_CHANGED, tuple(changed_parts(old_parts, parts))
    if previous.state == AttemptState.ERRORED:
        return PlanReason.PREVIOUS_ERRORED, ()
    if previous.state == AttemptState.UNRANKABLE or previous.gate == GateState.UNAVAILABLE:
        return PlanReason.PREVIOUS_UNRANKABLE, ()
    if timeout_ms is not None and previous.duration_ms > timeout_ms:
        return PlanReason.TIMEOUT_CHANGED, ()
    adoptable_on_rerun = previous.state == AttemptState.PASSED or (
        previous.state == AttemptState.SCORED and previous.gate in (GateState.PASSED, GateState.NONE)
    )
    if mode is RerunMode.RERUN and not adoptable_on_rerun:
        return PlanReason.RERUN, ()
    return PlanReason.REUSED, ()


def count_by_reason(slots: Sequence[PlannedSlot]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for slot in slots:
        counts[str(slot.reason)] = counts.get(str(slot.reason), 0) + 1
    return counts
