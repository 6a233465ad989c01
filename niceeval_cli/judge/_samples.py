"""Repeated grading (judge-trust.md §1): `judge.samples` requests per assertion, one grade.

`Sampled` wraps any grader: with `samples = n > 1` it asks the grader n times at once (through
the same client and limits) and folds the n grades with `fold` — the low median measurement, the
agreement (the share of the measured samples at that median), and every sample in the audit. With
`samples = 1` it hands the grader's grade back untouched, so a default judge is unchanged.
"""

from __future__ import annotations

import asyncio
import json
import math
import statistics
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .._redact import safe_json
from .._states import AssertionState, UnavailableReason
from ._grader import Grader, JudgeGrade, PreflightFailure

if TYPE_CHECKING:
    from ..config import JudgeSettings
    from ..expect._judge import JudgeMatch  # the judge match's definition: not in expect's pinned user API


class Sampled:
    """A grader that grades each assertion `settings.samples` times and folds the grades."""

    def __init__(self, inner: Grader) -> None:
        self.inner = inner

    def resolve_problem(self, settings: JudgeSettings | None) -> str | None:
        return self.inner.resolve_problem(settings)

    async def preflight(self, settings: JudgeSettings) -> PreflightFailure | None:
        return await self.inner.preflight(settings)

    async def grade(self, match: JudgeMatch, material: object, settings: JudgeSettings) -> JudgeGrade:
        n = samples_of(settings)
        if n == 1 or self.inner.resolve_problem(settings) is not None:
            return await self.inner.grade(match, material, settings)  # no request is made: nothing to repeat
        grades = await asyncio.gather(*(self.inner.grade(match, material, settings) for _ in range(n)))
        return fold(grades, min_agreement=settings.min_agreement, max_audit_bytes=match.max_audit_bytes)

    async def aclose(self) -> None:
        await self.inner.aclose()


def samples_of(settings: JudgeSettings | None) -> int:
    return max(1, int(getattr(settings, "samples", 1) or 1))


def fold(grades: Sequence[JudgeGrade], *, min_agreement: float | None, max_audit_bytes: int) -> JudgeGrade:
    """The one grade n samples make (judge-trust.md §1).

    An errored sample (an invalid response) errs the assertion, as judge.md says of one request.
    Fewer than ⌈n/2⌉ measured samples: unavailable, with the most frequent failure reason. Else the
    low median of the measurements, with its agreement; below `min_agreement`, unavailable
    (`judge-inconsistent`): a flaky judge never decides a gate."""
    n = len(grades)
    tokens = sum(g.tokens for g in grades)
    costs = [g.cost_usd for g in grades if g.cost_usd is not None]
    cost = sum(costs) if costs else None
    evidence = next((g.evidence for g in grades if g.evidence is not None), None)
    measured = [g for g in grades if g.state == AssertionState.MEASURED and g.measurement is not None]
    errored = next((g for g in grades if g.state == AssertionState.ERRORED), None)
    if errored is not None:
        chosen, state, reason, measurement = errored, AssertionState.ERRORED, errored.reason, None
        explanation = f"{_sample_word(grades, errored)}: {errored.explanation}"
    elif len(measured) < math.ceil(n / 2):
        reasons = Counter(g.reason for g in grades if g.state != AssertionState.MEASURED)
        reason = reasons.most_common(1)[0][0]
        chosen = next(g for g in grades if g.reason == reason)
        state, measurement = AssertionState.UNAVAILABLE, None
        explanation = (f"only {len(measured)} of {n} judge samples yielded a measurement (at least "
                       f"{math.ceil(n / 2)} needed); most often {reason}: {chosen.explanation}")
    else:
        median = statistics.median_low(g.measurement for g in measured)  # type: ignore[type-var]
        chosen = next(g for g in measured if g.measurement == median)
        state, reason, measurement, explanation = AssertionState.MEASURED, None, median, chosen.explanation
    agreeing = sum(g.measurement == measurement for g in measured) if measurement is not None else 0
    agreement = agreeing / len(measured) if measurement is not None else None
    if agreement is not None and min_agreement is not None and agreement < min_agreement:
        state, reason, measurement = AssertionState.UNAVAILABLE, str(UnavailableReason.JUDGE_INCONSISTENT), None
        explanation = (f"the judge's samples disagree: {agreeing} of {len(measured)} agree on {median:g} "
                       f"(agreement {agreement:.4g} < min_agreement {min_agreement:g}); "
                       f"that sample said: {chosen.explanation}")
    return JudgeGrade(
        state, measurement, reason, explanation, _audit(grades, chosen, max_audit_bytes), tokens, evidence,
        chosen.replaced, cost, agreement=agreement, samples=len(measured) if agreement is not None else None,
    )


def _sample_word(grades: Sequence[JudgeGrade], grade: JudgeGrade) -> str:
    return f"judge sample {grades.index(grade) + 1} of {len(grades)}"


def _audit(grades: Sequence[JudgeGrade], chosen: JudgeGrade, max_bytes: int) -> str:
    """The chosen sample's request and response, and every sample's measurement and explanation."""
    head = _loaded(chosen.audit)
    audit: dict[str, Any] = dict(head) if isinstance(head, dict) else {"response": head}
    audit.pop("cost_usd", None)
    costs = [g.cost_usd for g in grades if g.cost_usd is not None]
    if costs:
        audit["cost_usd"] = sum(costs)
    audit["samples"] = [_sample(g) for g in grades]
    return safe_json(audit, max_bytes=max_bytes)


def _sample(grade: JudgeGrade) -> dict[str, Any]:
    sample: dict[str, Any] = {"measurement": grade.measurement, "explanation": grade.explanation}
    if grade.state != AssertionState.MEASURED:
        sample.update(state=str(grade.state), reason=grade.reason)
    return sample


def _loaded(audit: str | None) -> Any:
    if audit is None:
        return None
    try:
        return json.loads(audit)
    except ValueError:  # stored audits are JSON (safe_json); a grader of another kind may differ
        return audit
