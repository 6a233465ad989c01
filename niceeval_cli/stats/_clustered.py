"""The mean over units with its clustered standard error (statistics.md, "Per experiment").

Every unit weighs the same. The cases of one dataset eval are correlated (one prompt, one
grader), so units sharing an eval form a cluster and their cross terms enter the variance —
E. Miller's clustered standard error. The same arithmetic serves a paired difference
(`compare`), with the differences as the values.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from statistics import NormalDist

from ._intervals import DEFAULT_CONFIDENCE, Interval, mean, z_of

__all__ = ["ClusteredMean", "PairedDifference", "clustered_mean", "paired_difference"]


@dataclass(frozen=True, slots=True)
class ClusteredMean:
    """x̄ over N units, its SE (None for N < 2), the interval and whether a cluster term entered."""

    estimate: float
    se: float | None
    interval: Interval | None
    n_units: int
    clustered: bool


def _variance(values: Sequence[float], clusters: Sequence[Hashable] | None, centre: float,
              alone: tuple[float, int]) -> tuple[float, bool]:
    """V_cl = Σ(xᵢ − x̄)² / (N(N − 1)) + (1/N²) Σ_clusters Σ_{i≠j} (xᵢ − x̄)(xⱼ − x̄), over `values` and
    `alone` (value, count): that many more units of one value, each its own cluster."""
    value, count = alone
    n = len(values) + count
    deviations = [x - centre for x in values]
    alone_square = (value - centre) * (value - centre)
    variance = math.fsum(itertools.chain((d * d for d in deviations), itertools.repeat(alone_square, count))) / (
        n * (n - 1))
    if clusters is None:
        return variance, False
    if len(clusters) != len(values):
        raise ValueError("one cluster per value")
    sums: dict[Hashable, list[float]] = defaultdict(list)
    for cluster, d in zip(clusters, deviations, strict=True):
        sums[cluster].append(d)
    cross = math.fsum(math.fsum(ds) ** 2 - math.fsum(d * d for d in ds) for ds in sums.values() if len(ds) > 1)
    return variance + cross / (n * n), any(len(ds) > 1 for ds in sums.values())


def clustered_mean(values: Sequence[float], clusters: Sequence[Hashable] | None = None,
                   confidence: float = DEFAULT_CONFIDENCE, *, bounds: tuple[float, float] = (0.0, 1.0),
                   alone: tuple[float, int] = (0.0, 0)) -> ClusteredMean | None:
    """The mean of `values` with its clustered SE and `x̄ ± z·SE` clipped to `bounds`; None when
    there are no values. `clusters[i]` names the cluster of `values[i]` (None: each its own).
    `alone` (value, count): that many more units of one value, each its own cluster — the same
    figures as those units listed, without a list entry per unit (the summary's evals counted as
    passed: 20 000 units of rate 1 held for a moment at a run's peak)."""
    value, count = alone
    n = len(values) + count
    if n == 0:
        return None
    estimate = math.fsum(itertools.chain(values, itertools.repeat(value, count))) / n
    if n < 2:
        return ClusteredMean(estimate, None, None, n, False)
    variance, clustered = _variance(values, clusters, estimate, alone)
    se = math.sqrt(max(variance, 0.0))
    half = z_of(confidence) * se
    low, high = bounds
    return ClusteredMean(estimate, se, Interval(max(low, estimate - half), min(high, estimate + half)), n, clustered)


@dataclass(frozen=True, slots=True)
class PairedDifference:
    """d̄ = mean(new − base) over the units decided on both sides, its SE, interval and p value."""

    base: float
    new: float
    difference: float
    se: float | None
    interval: Interval | None
    p_value: float | None
    n_units: int
    clustered: bool

    @property
    def wholly_below_zero(self) -> bool:
        return self.interval is not None and self.interval.high < 0.0


def paired_difference(base: Sequence[float], new: Sequence[float], clusters: Sequence[Hashable] | None = None,
                      confidence: float = DEFAULT_CONFIDENCE) -> PairedDifference | None:
    """The paired experiment-level difference; None without a paired unit. p = 2(1 − Φ(|d̄|/SE))
    (SE = 0: 0 when d̄ ≠ 0, else 1); fewer than two pairs: no interval and no p."""
    if len(base) != len(new):
        raise ValueError("base and new must pair unit by unit")
    if not base:
        return None
    differences = [b_new - b_base for b_base, b_new in zip(base, new, strict=True)]
    summary = clustered_mean(differences, clusters, confidence, bounds=(-1.0, 1.0))
    assert summary is not None
    p: float | None = None
    if summary.se is not None:
        if summary.se == 0.0:
            p = 0.0 if summary.estimate != 0.0 else 1.0
        else:
            p = 2.0 * (1.0 - NormalDist().cdf(abs(summary.estimate) / summary.se))
    return PairedDifference(mean(base), mean(new), summary.estimate, summary.se, summary.interval, p,
                            summary.n_units, summary.clustered)
