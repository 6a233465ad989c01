"""Agreement of a judge with a reference (people, or another judge): judge-trust.md §4.

Pure: a confusion table of pass / fail decisions in, figures out. Positive = pass; the
reference plays the truth (a human label, or RUN_A's judge with `--between`).
"""

from __future__ import annotations

from dataclasses import dataclass

from ._intervals import DEFAULT_CONFIDENCE, Interval, wilson


@dataclass(frozen=True, slots=True)
class Confusion:
    """Counts of (reference, judge) decisions: tp = both pass, fp = judge passes what the
    reference fails, fn = judge fails what the reference passes, tn = both fail."""

    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0

    @property
    def n(self) -> int:
        return self.tp + self.fp + self.fn + self.tn

    @property
    def agreed(self) -> int:
        return self.tp + self.tn

    def add(self, reference: bool, judge: bool) -> Confusion:
        """This table with one more pair."""
        return Confusion(self.tp + (reference and judge), self.fp + (not reference and judge),
                         self.fn + (reference and not judge), self.tn + (not reference and not judge))


def cohen_kappa(c: Confusion) -> float | None:
    """Cohen's kappa, (p_o − p_e) / (1 − p_e); None when chance agreement is certain (p_e = 1:
    both sides gave one and the same decision every time), where kappa is undefined.

    Computed over n² in whole numbers, one division at the end: the calibration gate compares
    kappa with `min_human_kappa`, and the float steps of p_o and p_e put a kappa of exactly 0.8
    (6/0/2/16) at 0.7999999999999999 — held back as "kappa 0.8000 < min_human_kappa 0.8"."""
    n = c.n
    if n == 0:
        return None
    # n² · p_e: both pass by their own rates, plus both fail by theirs.
    chance = (c.tp + c.fp) * (c.tp + c.fn) + (c.fn + c.tn) * (c.fp + c.tn)
    if chance >= n * n:
        return None
    return (n * c.agreed - chance) / (n * n - chance)


def _rate(part: int, whole: int) -> float | None:
    return part / whole if whole else None


@dataclass(frozen=True, slots=True)
class Agreement:
    """The figures of one judge identity (judge-trust.md §4); None where undefined."""

    confusion: Confusion
    accuracy: float | None  # decisions that agree, of all pairs
    interval: Interval | None  # Wilson interval of the accuracy
    kappa: float | None
    tpr: float | None  # judge passes, of the reference's passes (sensitivity)
    tnr: float | None  # judge fails, of the reference's fails (specificity)
    exact: float | None  # unthresholded pairs: identical values on the scale, of those pairs
    exact_n: int  # how many unthresholded pairs `exact` is over

    @property
    def n(self) -> int:
        return self.confusion.n


def agreement_of(confusion: Confusion, *, exact_equal: int = 0, exact_n: int = 0,
                 confidence: float = DEFAULT_CONFIDENCE) -> Agreement:
    """Every figure of a confusion table; `exact_equal` of `exact_n` unthresholded pairs had
    the very same value on the scale (reported beside, not part of the decisions)."""
    c = confusion
    return Agreement(
        confusion=c,
        accuracy=_rate(c.agreed, c.n),
        interval=wilson(c.agreed, c.n, confidence),
        kappa=cohen_kappa(c),
        tpr=_rate(c.tp, c.tp + c.fn),
        tnr=_rate(c.tn, c.tn + c.fp),
        exact=_rate(exact_equal, exact_n),
        exact_n=exact_n,
    )


__all__ = ["Agreement", "Confusion", "agreement_of", "cohen_kappa"]
