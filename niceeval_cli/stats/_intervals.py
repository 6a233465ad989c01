"""One unit's uncertainty (statistics.md, "Per unit"): Wilson intervals, pass@k, pass^k, t intervals.

Pure arithmetic. `z` comes from the standard library; a t quantile is scipy's (`_scipy.py`),
computed only when a t interval is asked for (a plain run never imports scipy).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

from ._scipy import scipy_calls

__all__ = ["DEFAULT_CONFIDENCE", "Interval", "mean", "pass_at_k", "pass_hat_k", "t_interval", "unit_mean", "wilson",
           "z_of"]

DEFAULT_CONFIDENCE = 0.95


@dataclass(frozen=True, slots=True)
class Interval:
    """A closed interval [low, high] around an estimate."""

    low: float
    high: float

    def contains(self, value: float) -> bool:
        """Whether `value` lies in the interval, as `--until-decided` asks it: low < value ≤ high."""
        return self.low < value <= self.high


def check_confidence(confidence: float) -> float:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be between 0 and 1 (exclusive), got {confidence!r}")
    return confidence


@functools.lru_cache(maxsize=64)
def z_of(confidence: float = DEFAULT_CONFIDENCE) -> float:
    """The two-sided normal quantile: Φ⁻¹(1 − (1 − c)/2) (1.959964 for 0.95)."""
    return NormalDist().inv_cdf(1.0 - (1.0 - check_confidence(confidence)) / 2.0)


def wilson(passed: int, n: int, confidence: float = DEFAULT_CONFIDENCE) -> Interval | None:
    """The Wilson score interval of `passed` of `n` (None without evidence, n = 0).

    At s = n the high end is exactly 1 and at s = 0 the low end exactly 0 (the formula's
    algebra); computed in floats it lands an ulp short for some n (13 of 13 at 0.95 gave
    0.9999999999999999), which decided an all-passing `pass_rule = 1` unit `failed`."""
    if n <= 0:
        return None
    if not 0 <= passed <= n:
        raise ValueError(f"passed must be between 0 and n={n}, got {passed}")
    z = z_of(confidence)
    p = passed / n
    z2n = z * z / n
    centre = (p + z2n / 2.0) / (1.0 + z2n)
    half = z / (1.0 + z2n) * math.sqrt(p * (1.0 - p) / n + z * z / (4.0 * n * n))
    return Interval(0.0 if passed == 0 else max(0.0, centre - half), 1.0 if passed == n else min(1.0, centre + half))


def pass_at_k(n: int, passed: int, k: int) -> float | None:
    """Chen et al.'s unbiased pass@k = 1 − C(n − s, k) / C(n, k); None when k > n (or k < 1)."""
    if k < 1 or k > n:
        return None
    return 1.0 - math.comb(n - passed, k) / math.comb(n, k)


def pass_hat_k(n: int, passed: int, k: int) -> float | None:
    """τ-bench's pass^k = C(s, k) / C(n, k): every one of k attempts passes; None when k > n."""
    if k < 1 or k > n:
        return None
    return math.comb(passed, k) / math.comb(n, k)


def mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values)


def unit_mean(values: Sequence[float]) -> float:
    """A score-style unit's mean as comparisons read it: rounded to 10 places, so that the same
    scores in another count give the same float ([0.1] * 3 → 0.10000000000000002 unrounded, [0.1] * 7
    → 0.1). A difference in the last bit of a sum is no change; read as one, with no spread around
    it, it would be a certain one (p 0)."""
    return round(mean(values), 10) + 0.0


@functools.lru_cache(maxsize=1024)
def t_quantile(confidence: float, df: int) -> float:
    """t(c, df): the two-sided Student t quantile (scipy's, `_scipy.py`)."""
    return scipy_calls().t_ppf([(1.0 - (1.0 - check_confidence(confidence)) / 2.0, df)])[0]


def t_interval(values: Sequence[float], confidence: float = DEFAULT_CONFIDENCE) -> Interval | None:
    """x̄ ± t(c, n − 1) · sd / √n, clipped to [0, 1]; None for fewer than two values."""
    n = len(values)
    if n < 2:
        return None
    centre = mean(values)
    sd = math.sqrt(math.fsum((x - centre) ** 2 for x in values) / (n - 1))
    if sd == 0.0:
        return Interval(min(1.0, max(0.0, centre)), min(1.0, max(0.0, centre)))
    half = t_quantile(confidence, n - 1) * sd / math.sqrt(n)
    return Interval(max(0.0, centre - half), min(1.0, centre + half))
