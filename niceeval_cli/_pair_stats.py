"""What statistics.md adds to `compare` (comparison.py): a pair's test and intervals, and each
experiment's paired difference as a row. Pure, like comparison.py."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from .stats import ExperimentDifference, Interval, PairedDifference, UnitEvidence, UnitTest, t_interval, wilson

__all__ = ["EXPERIMENT_COLUMNS", "ExperimentChange", "PairStats", "change_of", "gate_evidence", "interval_of"]


@dataclass(frozen=True)
class PairStats:
    """What statistics.md adds to a pair: its test (p, BH q, significance) and each side's interval."""

    test: UnitTest
    base_interval: Interval | None
    new_interval: Interval | None


@lru_cache(maxsize=4096)
def interval_of(evidence: UnitEvidence | None, confidence: float) -> Interval | None:
    """A side's interval: Wilson for pass-style, t for score-style (as `unit_stats` gives it).
    Once per distinct evidence: 20 000 sides of a few attempts each meet a few hundred."""
    if evidence is None or not evidence.decided:
        return None
    if evidence.style == "pass":
        return wilson(evidence.passed, evidence.decided, confidence)
    return t_interval(evidence.scores, confidence)


def gate_evidence(gates_passed: int, gates_failed: int) -> UnitEvidence:
    """A score-style unit's gate as pass-style evidence: attempts whose gate passed of those whose
    gate passed or failed (an unavailable gate is evidence neither way). A pair whose class its
    gate decided (passed → failed, or back) is tested on this, by Fisher's exact test: its scores
    may not have moved at all, and Welch's test on them would call 5 of 5 gates → 0 of 5 noise."""
    return UnitEvidence("pass", gates_passed, gates_failed)


@dataclass(frozen=True)
class ExperimentChange:
    """One experiment's paired difference (new − base) for one style, over its paired units."""

    experiment_id: str  # the new side's (B for --experiments)
    base_experiment_id: str
    style: str  # "pass" | "score"
    difference: PairedDifference

    def row(self) -> dict[str, Any]:
        d = self.difference
        return {
            "experiment_id": self.experiment_id, "base_experiment_id": self.base_experiment_id, "style": self.style,
            "estimate_base": d.base, "estimate_new": d.new, "difference": d.difference,
            "low": None if d.interval is None else d.interval.low,
            "high": None if d.interval is None else d.interval.high,
            "se": d.se, "p_value": d.p_value, "n_units": d.n_units,
        }


EXPERIMENT_COLUMNS: tuple[str, ...] = (
    "experiment_id", "base_experiment_id", "style", "estimate_base", "estimate_new", "difference", "low", "high",
    "se", "p_value", "n_units",
)


def change_of(found: ExperimentDifference) -> ExperimentChange:
    key: tuple[str, str] = found.experiment_id  # type: ignore[assignment]  # the (new, base) key comparison.compare gave
    return ExperimentChange(key[0], key[1], found.style, found.difference)
