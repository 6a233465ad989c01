"""A score's standing for display: where a rankable score sits between 0 and its maximum.

A score-style eval has no pass threshold of its own (outcomes.md): its gates decide pass or fail,
and a failed or unavailable gate is shown as such by whoever shows the score. What is left — a
score whose gates held or that has none — is graded by its share of the maximum, so a 1-of-6
score never reads like a pass. Renderers colour and mark by the grade and also say it in words,
so nothing relies on colour alone.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["GRADES", "Standing", "score_standing"]

#: (lowest share of the maximum, grade), best first. The words and marks the renderers use.
GRADES: tuple[tuple[float, str], ...] = ((0.8, "high"), (0.5, "middling"), (0.0, "low"))
_MARKS = {"high": "●", "middling": "◐", "low": "○"}


@dataclass(frozen=True)
class Standing:
    grade: str  # high | middling | low
    share: float  # score / max_score, in [0, 1]

    @property
    def mark(self) -> str:
        return _MARKS[self.grade]

    @property
    def rank(self) -> int:
        """0 for the lowest grade: a list sorted by it shows low scores first."""
        return len(GRADES) - 1 - [g for _, g in GRADES].index(self.grade)

    @property
    def words(self) -> str:
        """`low score: 17% of the maximum`."""
        return f"{self.grade} score: {self.share:.0%} of the maximum"


def score_standing(score: float | None, max_score: float | None) -> Standing | None:
    """The grade of a rankable score; None when there is no score or no positive maximum."""
    if score is None or max_score is None or max_score <= 0:
        return None
    share = min(1.0, max(0.0, score / max_score))
    grade = next(g for lowest, g in GRADES if share >= lowest - 1e-9)
    return Standing(grade, share)
