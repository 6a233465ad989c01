"""Comparing two sides unit by unit and experiment by experiment (statistics.md, "Comparisons").

Per unit decided on both sides: Fisher's exact test (pass-style) or Welch's t test (score-style,
two decided attempts a side); the p values of one comparison are adjusted together
(Benjamini–Hochberg, the family being every tested pair, unchanged ones included). Per
experiment: the paired difference over the units decided on both sides, clustered by eval.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass

from ._clustered import ClusteredMean, PairedDifference, clustered_mean, paired_difference
from ._intervals import DEFAULT_CONFIDENCE, unit_mean
from ._significance import DEFAULT_ALPHA, Significance, bh_q_values, fisher_p, significance_of, welch_p
from ._units import UnitEvidence

__all__ = ["ExperimentDifference", "ExperimentEstimate", "UnitTest", "experiment_differences", "experiment_estimates",
           "pair_tests"]


@dataclass(frozen=True, slots=True)
class UnitTest:
    """One pair's test: its p, its BH q within the comparison, and what that means at α."""

    p_value: float | None
    q_value: float | None
    significance: Significance


def _p_of(base: UnitEvidence, new: UnitEvidence) -> float | None:
    if base.style != new.style or base.decided == 0 or new.decided == 0:
        return None
    if base.style == "pass":
        return fisher_p(base.passed, base.decided, new.passed, new.decided)
    return welch_p(base.scores, new.scores)


def pair_tests(pairs: Sequence[tuple[UnitEvidence | None, UnitEvidence | None]],
               alpha: float = DEFAULT_ALPHA) -> list[UnitTest]:
    """One UnitTest per pair, in order; a pair with a side missing or too little evidence is
    `untestable` and outside the family."""
    ps = [_p_of(b, n) if b is not None and n is not None else None for b, n in pairs]
    tested = [p for p in ps if p is not None]
    qs = iter(bh_q_values(tested))
    tests = []
    for p in ps:
        q = next(qs) if p is not None else None
        tests.append(UnitTest(p, q, significance_of(q, alpha)))
    return tests


@dataclass(frozen=True, slots=True)
class ExperimentDifference:
    """The paired difference of one experiment (or experiment pair: any key the caller gave) for one style."""

    experiment_id: Hashable
    style: str
    difference: PairedDifference


def _estimate(evidence: UnitEvidence) -> float:
    if evidence.style == "pass":
        return evidence.passed / evidence.decided
    return unit_mean(evidence.scores)


def experiment_differences(
    pairs: Sequence[tuple[Hashable, Hashable, UnitEvidence | None, UnitEvidence | None]],
    confidence: float = DEFAULT_CONFIDENCE,
) -> list[ExperimentDifference]:
    """Per (experiment, style), the paired difference over units decided on both sides.
    `pairs`: (experiment id, cluster — the unit's eval —, base evidence, new evidence)."""
    grouped: dict[tuple[Hashable, str], tuple[list[float], list[float], list[Hashable]]] = {}
    for experiment_id, cluster, base, new in pairs:
        if base is None or new is None or base.style != new.style or not base.decided or not new.decided:
            continue
        bases, news, clusters = grouped.setdefault((experiment_id, base.style), ([], [], []))
        bases.append(_estimate(base))
        news.append(_estimate(new))
        clusters.append(cluster)
    found = []
    for (experiment_id, style), (bases, news, clusters) in grouped.items():
        difference = paired_difference(bases, news, clusters, confidence)
        if difference is not None:
            found.append(ExperimentDifference(experiment_id, style, difference))
    return found


@dataclass(frozen=True, slots=True)
class ExperimentEstimate:
    """One experiment's mean over its units of one style (`query experiments`, the summary)."""

    experiment_id: str
    style: str
    summary: ClusteredMean | None  # None when no unit has evidence
    undecided_units: int  # units without a decided attempt: counted beside, not in the mean


def experiment_estimates(units: Iterable[tuple[str, Hashable, UnitEvidence]],
                         confidence: float = DEFAULT_CONFIDENCE, *,
                         alone: Iterable[tuple[str, UnitEvidence, int]] = ()) -> list[ExperimentEstimate]:
    """Per (experiment, style), in first-seen order: x̄ over the units with evidence, its clustered
    SE and interval. `units`: (experiment id, cluster — the unit's eval —, evidence). `alone`:
    (experiment id, evidence, count): that many more units after `units`, each with this evidence
    and its own cluster (one entry per experiment and style) — held as a count, not unit by unit."""
    grouped: dict[tuple[str, str], tuple[list[float], list[Hashable], list[int]]] = {}
    for experiment_id, cluster, evidence in units:
        values, clusters, undecided = grouped.setdefault((experiment_id, evidence.style), ([], [], [0]))
        if evidence.decided:
            values.append(_estimate(evidence))
            clusters.append(cluster)
        else:
            undecided[0] += 1
    more: dict[tuple[str, str], tuple[float, int]] = {}
    for experiment_id, evidence, count in alone:
        if not count:
            continue
        key = (experiment_id, evidence.style)
        values, clusters, undecided = grouped.setdefault(key, ([], [], [0]))
        if key in more:
            raise ValueError(f"one entry of units alone per experiment and style, {key} given twice")
        if evidence.decided:
            more[key] = (_estimate(evidence), count)
        else:
            undecided[0] += count
    return [ExperimentEstimate(experiment_id, style,
                               clustered_mean(values, clusters, confidence, alone=more.get((experiment_id, style),
                                                                                           (0.0, 0))),
                               undecided[0])
            for (experiment_id, style), (values, clusters, undecided) in grouped.items()]
