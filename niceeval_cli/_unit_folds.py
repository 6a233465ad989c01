"""One unit's attempts folded to counts: what comparing reads of an (experiment, eval, case).

`compare` (comparison.py) pairs units and classes them from what their attempts add up to:
how many passed, failed, errored, were scored or unrankable; the score gates; the scores; each
assertion key's states; the unit's evidence (statistics.md). `UnitFold` holds exactly that, so
the store can fold a run's 100 000 attempts in SQL (store/unit_folds.py) and hand over 10 000
folds instead of the attempts, and `unit_fold` folds attempts in Python to the same value (the
tests hold the two to each other). Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from types import MappingProxyType

from ._states import (
    ASSERTION_STATE_OF,
    ATTEMPT_STATE_OF,
    GATE_OF,
    KIND_OF,
    AssertionState,
    AttemptState,
    EvalKind,
    GateState,
)
from .stats import UnitEvidence, evidence_of, unit_mean

__all__ = ["AttemptFacts", "UnitFold", "fold_key_states", "mean_score", "score_evidence", "shared_key_states",
           "unit_fold"]


@dataclass(frozen=True, slots=True)  # one per attempt, and a report holds every attempt's
class AttemptFacts:
    """What comparing reads of one sealed attempt (built by the app layer from store rows)."""

    experiment_id: str
    eval_id: str
    kind: EvalKind
    state: AttemptState
    gate: GateState | None = None
    score: float | None = None
    max_score: float | None = None
    case_id: str | None = None
    ordinal: int = 0
    pass_rule: str | None = None  # as recorded on the run's slot; None folds under "any"
    assertion_states: Mapping[str, AssertionState] = field(default_factory=dict)  # key → state
    unavailable_weight: float | None = None
    duration_ms: float | None = None
    cost_usd: float | None = None
    eval_module: str | None = None  # its identity (authoring.md); None when sealed before schema 5
    eval_name: str | None = None


@dataclass(frozen=True, slots=True)
class UnitFold:
    """One unit of one side, its attempts folded. The ids, kind and pass rule are those of its
    first attempt by ordinal; the counts are over every attempt."""

    experiment_id: str
    eval_id: str
    case_id: str | None
    kind: EvalKind
    pass_rule: str | None
    attempts: int
    passed: int  # attempts by state
    failed: int
    errored: int
    scored: int
    unrankable: int
    gates_passed: int  # score gates (attempts without a gate, or with gate `none`, are not counted)
    gates_failed: int
    gates_unavailable: int
    scored_gate_passed: int  # `scored` attempts whose gate passed or that have none
    scores: tuple[float, ...]  # every score the attempts have (any state), for the mean
    max_score: float | None  # the largest max_score the attempts have
    key_states: Mapping[str, tuple[str, ...]]  # assertion key → its states over the attempts, sorted
    evidence: UnitEvidence
    eval_module: str | None = None  # the unit's identity, when its attempts carry one
    eval_name: str | None = None
    #: (severity, experiment, eval id, ordinal) of its first attempt in the store's reading order
    #: (attempts worst first): where the unit is first seen. Set by the store's folds.
    first_seen: tuple[int, str, str, int] | None = None
    #: planned attempts of the unit no attempt filled (a shard group's missing shard, a spent
    #: budget): its verdict stands only where they could not change it. Set by `compare`.
    missing: int = 0


_NO_KEYS: Mapping[str, tuple[str, ...]] = MappingProxyType({})


def unit_fold(attempts: Sequence[AttemptFacts], *, keys: bool = True) -> UnitFold:
    """Fold one unit's attempts (in ordinal order). `keys=False` leaves the assertion keys out,
    for readers that do not compare them."""
    if not attempts:
        raise ValueError("a unit needs at least one attempt")
    first = attempts[0]
    counts = dict.fromkeys(AttemptState, 0)
    gates = dict.fromkeys(GateState, 0)
    scored_gate_passed = 0
    scores: list[float] = []
    maxima: list[float] = []
    for a in attempts:
        state = ATTEMPT_STATE_OF[a.state]
        counts[state] += 1
        gate = None if a.gate is None else GATE_OF[a.gate]
        if gate is not None:
            gates[gate] += 1
        if state is AttemptState.SCORED and gate in (None, GateState.PASSED, GateState.NONE):
            scored_gate_passed += 1
        if a.score is not None:
            scores.append(a.score)
        if a.max_score is not None:
            maxima.append(a.max_score)
    return UnitFold(
        experiment_id=first.experiment_id,
        eval_id=first.eval_id,
        case_id=first.case_id,
        kind=KIND_OF[first.kind],
        pass_rule=first.pass_rule,
        attempts=len(attempts),
        passed=counts[AttemptState.PASSED],
        failed=counts[AttemptState.FAILED],
        errored=counts[AttemptState.ERRORED],
        scored=counts[AttemptState.SCORED],
        unrankable=counts[AttemptState.UNRANKABLE],
        gates_passed=gates[GateState.PASSED],
        gates_failed=gates[GateState.FAILED],
        gates_unavailable=gates[GateState.UNAVAILABLE],
        scored_gate_passed=scored_gate_passed,
        scores=tuple(scores),
        max_score=max(maxima) if maxima else None,
        key_states=fold_key_states(a.assertion_states for a in attempts) if keys else _NO_KEYS,
        evidence=evidence_of(attempts),
        eval_module=first.eval_module,
        eval_name=first.eval_name,
    )


def fold_key_states(mappings: Iterable[Mapping[str, AssertionState | str]]) -> Mapping[str, tuple[str, ...]]:
    """Each assertion key's states over a unit's attempts (each attempt's key → state, in
    ordinal order), sorted; keys in the order first seen."""
    by_key: dict[str, list[str]] = {}
    for mapping in mappings:
        for key, key_state in mapping.items():
            by_key.setdefault(key, []).append(ASSERTION_STATE_OF[key_state].value)
    return shared_key_states(tuple((k, tuple(sorted(v))) for k, v in by_key.items()))


@lru_cache(maxsize=4096)
def shared_key_states(items: tuple[tuple[str, tuple[str, ...]], ...]) -> Mapping[str, tuple[str, ...]]:
    """One read-only mapping for every unit whose keys fared alike: a report pairing many evals
    holds a few of them, not a dict per unit."""
    return MappingProxyType(dict(items))


def score_evidence(state: str, gate: str | None, score: float | None, max_score: float | None) -> float | None:
    """A score-style attempt's evidence x = score / max_score in [0, 1], or None when it is not
    evidence (statistics.md; the same rule as `stats.evidence_of`)."""
    if (ATTEMPT_STATE_OF[state] is AttemptState.SCORED and (gate is None or GATE_OF[gate] is not GateState.UNAVAILABLE)
            and score is not None and max_score is not None and max_score > 0):
        return min(1.0, max(0.0, float(score) / float(max_score)))
    return None


def mean_score(values: Sequence[float]) -> float:
    """The mean a side shows: the statistics' `unit_mean` (rounded to 10 places: sums of the same
    scores agree), so a pair's class and its experiment's paired difference read the same means."""
    return unit_mean(values)
