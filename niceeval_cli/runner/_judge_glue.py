"""Judge glue: a slot's grading function, settling a registration with the run's Grader's grade."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, cast

from .._states import AssertionState
from ..authoring import Registration, exception_text
from ..config import JudgeSettings
from ..expect import MatchResult, ThresholdedScoreMatch
from ._spec import JudgeGrader

if TYPE_CHECKING:
    from ..judge import Grader, JudgeMatch


def judge_grader(judge: Grader | None, settings: JudgeSettings | None) -> JudgeGrader | None:
    """None when the slot declares no judge (or the run has no grader)."""
    if settings is None or judge is None:
        return None

    from ..judge import judge_input

    async def grade(reg: Registration, match: Any, material: Any) -> None:
        inner = match.inner if isinstance(match, ThresholdedScoreMatch) else match
        try:  # before grading: the input is what was asked, whatever the judge answers
            reg.judge_input = judge_input(cast("JudgeMatch", inner), material, _judge_secrets(settings))
        except Exception:  # an input that cannot be kept costs the regrade, never the grade
            reg.judge_input = None
        try:
            graded = await judge.grade(cast("JudgeMatch", inner), material, settings)  # a judge registration's
            result = MatchResult(graded.state, graded.explanation, graded.reason, graded.measurement)
            reg.judge_audit, reg.judge_tokens, reg.judge_evidence = (
                graded.audit, graded.tokens, graded.evidence,
            )
            reg.judge_agreement, reg.judge_samples = graded.agreement, graded.samples
            reg.judge_cost_usd = graded.cost_usd
            if graded.replaced:
                reg.seal_notes.append(f"judge reasoning of {reg.label or f'#{reg.ordinal}'}: {graded.replaced} "
                                      "code point(s) that cannot be stored as UTF-8 replaced with U+FFFD")
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            result = MatchResult(
                AssertionState.ERRORED, exception_text(exc), "judge-evaluator-error"
            )
        if isinstance(match, ThresholdedScoreMatch):
            result = match.apply_threshold(result)
        reg.result = result

    return grade


def _judge_secrets(settings: JudgeSettings) -> list[str]:
    """The values the grader redacts: the key, and the secrets named in `[judge] headers`."""
    from .._gateway import resolve_headers

    key = settings.read_key()
    return [*([key] if key else []), *resolve_headers(settings.headers).secrets]
