"""Several attempts of one eval: pass rules, folds and score summaries (outcomes.md, pure)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from .. import stats
from .._states import AttemptState, GateState
from ._attempt import ScoreAttemptLike, _round, _sum

# ── several attempts of one eval ─────────────────────────────────────────────────────────

@dataclass(frozen=True, slots=True)
class IntervalRule:
    """A minimum pass rate decided by the unit's Wilson interval (`run --until-decided`,
    statistics.md): passed when the interval's low end reaches `rate`, failed when its high end
    is below it, otherwise undecided — counted like `errored`, never as a pass or a fail.

    The slots of such a run store it as text (`0.8 until decided at 0.95`), so every reader folds
    that run's units the way the run decided them, whatever `--confidence` it is read with."""

    rate: float
    confidence: float

    def __str__(self) -> str:
        return f"{self.rate:g}{_UNTIL_DECIDED}{self.confidence:g}"


_UNTIL_DECIDED = " until decided at "

PassRule = Literal["any", "all"] | float | IntervalRule

#: The pass rule of an eval that sets none (config.md), and the fold of a stored slot without one.
DEFAULT_PASS_RULE: PassRule = "any"


def parse_pass_rule(value: object) -> PassRule:
    """Validate a `pass_rule` setting: "any", "all", or a minimum pass rate in (0, 1]."""
    if isinstance(value, IntervalRule):  # made by the runner from a valid rate, never read from a file
        return value
    if value == "any":
        return "any"
    if value == "all":
        return "all"
    if isinstance(value, str):
        hint = " (write the number without quotes)" if _looks_numeric(value) else ""
        raise ValueError(f'pass_rule must be "any", "all" or a number in (0, 1], got {value!r}{hint}')
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f'pass_rule must be "any", "all" or a number in (0, 1], got {value!r}')
    rate = float(value)
    if not 0.0 < rate <= 1.0:  # NaN fails this too
        raise ValueError(f"pass_rule as a minimum pass rate must be in (0, 1], got {value!r}")
    return rate


@lru_cache(maxsize=64)
def stored_pass_rule(stored: str | float | None, absent: PassRule = DEFAULT_PASS_RULE) -> PassRule:
    """A pass rule as a run's slots store it ("any", "all" or a rate as text such as "0.8").

    `absent` is what a slot without one (a store written before slots recorded it) folds under:
    the default for what the reports show; deciding a run's exit code has always read it as "all"."""
    if stored is None:
        return absent
    if isinstance(stored, str) and stored not in ("any", "all"):
        rate, until, confidence = stored.partition(_UNTIL_DECIDED)  # "0.8 until decided at 0.95"
        try:
            decoded = parse_pass_rule(float(rate))
        except ValueError:
            return parse_pass_rule(stored)
        return IntervalRule(decoded, float(confidence)) if until else decoded  # type: ignore[arg-type]
    return parse_pass_rule(stored)


def _looks_numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


@dataclass(frozen=True, slots=True)
class EvalFold:
    """One (experiment, eval) folded over its attempts under a pass_rule."""

    result: AttemptState  # passed | failed | errored
    passed: int
    failed: int
    errored: int
    pass_rate: float | None  # passed / (passed + failed); None when no attempt was decided
    undecided: bool = False  # an IntervalRule whose interval still contains its rate (result: errored)




def fold_pass_eval(states: Sequence[AttemptState | str], rule: PassRule) -> EvalFold:
    """Fold pass-style attempt verdicts; with no attempts nothing was decided, so `errored`."""
    rule = parse_pass_rule(rule)
    passed = failed = errored = 0
    for raw in states:  # one pass; a run folds every eval it has (20 000 of them, say)
        s = raw if type(raw) is AttemptState else AttemptState(raw)
        if s is AttemptState.PASSED:
            passed += 1
        elif s is AttemptState.FAILED:
            failed += 1
        elif s is AttemptState.ERRORED:
            errored += 1
        else:
            raise not_pass_style(s)
    result, pass_rate = pass_verdict(passed, failed, errored, rule)
    return EvalFold(result=result, passed=passed, failed=failed, errored=errored, pass_rate=pass_rate,
                    undecided=is_undecided(passed, failed, rule))


def not_pass_style(state: AttemptState) -> ValueError:
    return ValueError(f"{state} is not a pass-style attempt state")


def pass_verdict(passed: int, failed: int, errored: int, rule: PassRule) -> tuple[AttemptState, float | None]:
    """The fold's result and pass rate from its counts alone (`rule` already parsed): what
    `fold_pass_eval` decides, for readers that hold counts rather than one state per attempt."""
    total = passed + failed + errored
    decided = passed + failed  # errored attempts are evidence neither way (statistics.md)
    pass_rate = passed / decided if decided else None
    if isinstance(rule, IntervalRule):
        return _interval_verdict(passed, decided, rule), pass_rate
    if rule == "any":
        ok = passed > 0
    elif rule == "all":
        ok = total > 0 and passed == total
    else:
        ok = pass_rate is not None and pass_rate >= rule
    if ok:
        return AttemptState.PASSED, pass_rate
    return (AttemptState.FAILED if failed else AttemptState.ERRORED), pass_rate


def settled_verdict(passed: int, failed: int, errored: int, missing: int, rule: PassRule) -> AttemptState:
    """The fold's result when `missing` of the eval's planned attempts were never sealed (a shard
    not merged yet, a run stopped early): what the sealed attempts give only when no outcome of
    the missing ones could change it, else `errored` — nothing definite yet. Every missing attempt
    passing, every one failing and every one erroring are the extremes; any mix folds between them
    (tests/outcomes/test_settled_verdict.py checks every mix), so their agreement is enough."""
    sealed = pass_verdict(passed, failed, errored, rule)[0]
    if missing <= 0:
        return sealed
    extremes = {pass_verdict(passed + missing, failed, errored, rule)[0],
                pass_verdict(passed, failed + missing, errored, rule)[0],
                pass_verdict(passed, failed, errored + missing, rule)[0]}
    return sealed if extremes == {sealed} else AttemptState.ERRORED


def _interval_verdict(passed: int, decided: int, rule: IntervalRule) -> AttemptState:
    """Passed when low ≥ r, failed when high < r; otherwise (or with nothing decided) errored."""
    interval = stats.wilson(passed, decided, rule.confidence)
    if interval is None:
        return AttemptState.ERRORED
    if interval.low >= rule.rate:
        return AttemptState.PASSED
    if interval.high < rule.rate:
        return AttemptState.FAILED
    return AttemptState.ERRORED


def is_undecided(passed: int, failed: int, rule: PassRule) -> bool:
    """A unit with decided attempts whose Wilson interval still contains its IntervalRule's rate:
    "insufficient evidence", folded like `errored` (statistics.md)."""
    if not isinstance(rule, IntervalRule) or not passed + failed:
        return False
    return _interval_verdict(passed, passed + failed, rule) is AttemptState.ERRORED


def undecided_text(passed: int, failed: int, rule: IntervalRule) -> str:
    """`insufficient evidence (11/14, [0.52, 0.92] contains 0.8)`."""
    n = passed + failed
    interval = stats.wilson(passed, n, rule.confidence)
    bounds = "" if interval is None else f", [{interval.low:.2f}, {interval.high:.2f}] contains {rule.rate:g}"
    return f"insufficient evidence ({passed}/{n}{bounds})"


@dataclass(frozen=True)
class ScoreSummary:
    """Score-style attempts of one scope; totals cover the attempts that have a score."""

    attempts: int
    rankable: int
    unrankable: int
    errored: int
    mean: float | None  # over rankable (`scored`) attempts only
    min: float | None
    max: float | None
    earned: float  # Σ score of scored + unrankable attempts (errored ones have no score)
    max_score: float
    unavailable_weight: float
    gate_failed: int
    gate_unavailable: int


_SCORE_STATES = frozenset({AttemptState.SCORED, AttemptState.UNRANKABLE, AttemptState.ERRORED})
_GATES = {g.value: g for g in GateState}


def gate_of(raw: GateState | str) -> GateState:
    """`GateState(raw)`, a dict look-up for the usual stored text (an unknown one still raises)."""
    if type(raw) is GateState:
        return raw
    known = _GATES.get(raw) if type(raw) is str else None
    return known if known is not None else GateState(raw)


@dataclass
class ScoreCounts:
    """The counts of score-style attempts (what deciding a run reads; no score sums)."""

    attempts: int = 0
    errored: int = 0
    unrankable: int = 0
    gate_failed: int = 0
    gate_unavailable: int = 0

    def add(self, other: ScoreCounts) -> None:
        self.attempts += other.attempts
        self.errored += other.errored
        self.unrankable += other.unrankable
        self.gate_failed += other.gate_failed
        self.gate_unavailable += other.gate_unavailable


def count_scores(attempts: Iterable[ScoreAttemptLike], counts: Iterable[int]) -> ScoreCounts:
    """Count score-style attempts (`counts[i]`: how many `attempts[i]` stands for), refusing a
    state that is not score-style and a scored attempt without a score."""
    tally = ScoreCounts()
    for a, n in zip(attempts, counts, strict=True):
        tally.attempts += n
        state = AttemptState(a.state)
        if state not in _SCORE_STATES:
            raise ValueError(f"{state} is not a score-style attempt state")
        if state is AttemptState.ERRORED:
            tally.errored += n
        elif state is AttemptState.UNRANKABLE:
            tally.unrankable += n
        elif a.score is None:
            raise ValueError("a scored attempt needs a score")
        gate = gate_of(a.gate) if a.gate is not None else GateState.NONE
        if gate is GateState.FAILED:
            tally.gate_failed += n
        elif gate is GateState.UNAVAILABLE:
            tally.gate_unavailable += n
    return tally


def summarize_scores(
    attempts: Sequence[ScoreAttemptLike], counts: Sequence[int] | None = None
) -> ScoreSummary:
    """Mean/min/max of rankable scores, the counts around them, and the earned/max totals.

    `counts[i]` says how many attempts `attempts[i]` stands for (readers that group identical
    outcomes pass one item per group); default one each.
    """
    weights: Sequence[int] = counts if counts is not None else [1] * len(attempts)
    tally = count_scores(attempts, weights)  # the checks, and every count
    rankable: list[tuple[float, int]] = []
    counted: list[tuple[ScoreAttemptLike, int]] = []
    for a, n in zip(attempts, weights, strict=True):
        state = AttemptState(a.state)
        if state is not AttemptState.ERRORED:
            counted.append((a, n))
            if state is not AttemptState.UNRANKABLE and a.score is not None:
                rankable.append((a.score, n))
    ranked = sum(n for _, n in rankable)
    return ScoreSummary(
        attempts=tally.attempts,
        rankable=ranked,
        unrankable=tally.unrankable,
        errored=tally.errored,
        mean=_round(math.fsum(s * n for s, n in rankable) / ranked) if ranked else None,
        min=min(s for s, _ in rankable) if ranked else None,
        max=max(s for s, _ in rankable) if ranked else None,
        earned=_sum((a.score or 0.0) * n for a, n in counted),
        max_score=_sum((a.max_score or 0.0) * n for a, n in counted),
        unavailable_weight=_sum((a.unavailable_weight or 0.0) * n for a, n in counted),
        gate_failed=tally.gate_failed,
        gate_unavailable=tally.gate_unavailable,
    )


