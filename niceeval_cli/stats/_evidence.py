"""A unit's evidence from its sealed attempts (statistics.md, "Units and evidence").

Only decided attempts are evidence: a pass-style attempt that passed or failed; a score-style
attempt `scored` with a positive maximum (its score / max). Errored, unrankable and
gate-unavailable attempts are counted beside, never as failures or zeros.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from .._states import ATTEMPT_STATE_OF, GATE_OF, KIND_OF, AttemptState, EvalKind, GateState
from ._units import UnitEvidence

__all__ = ["AttemptLike", "evidence_of"]


class AttemptLike(Protocol):
    """What evidence reads of one sealed attempt (a store row's fields, or `AttemptFacts`)."""

    @property
    def kind(self) -> str: ...

    @property
    def state(self) -> str: ...

    @property
    def gate(self) -> str | None: ...

    @property
    def score(self) -> float | None: ...

    @property
    def max_score(self) -> float | None: ...




def evidence_of(attempts: Iterable[AttemptLike]) -> UnitEvidence:
    """The evidence of one unit's attempts (all of one kind: the first one's decides the style)."""
    passed = failed = not_counted = 0
    scores: list[float] = []
    style: str | None = None
    for attempt in attempts:
        kind = KIND_OF[attempt.kind]
        style = style or ("pass" if kind is EvalKind.PASS else "score")
        state = ATTEMPT_STATE_OF[attempt.state]
        if kind is EvalKind.PASS:
            if state is AttemptState.PASSED:
                passed += 1
            elif state is AttemptState.FAILED:
                failed += 1
            else:
                not_counted += 1
            continue
        gate = GATE_OF[attempt.gate] if attempt.gate is not None else GateState.NONE
        if (state is AttemptState.SCORED and gate is not GateState.UNAVAILABLE and attempt.score is not None
                and attempt.max_score is not None and attempt.max_score > 0):
            scores.append(min(1.0, max(0.0, float(attempt.score) / float(attempt.max_score))))
        else:
            not_counted += 1
    return UnitEvidence(style or "pass", passed, failed, tuple(scores), not_counted)
