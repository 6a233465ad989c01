"""Whether a change is larger than the noise (statistics.md, "Comparisons"): Fisher's exact test
per pass-style unit, Welch's t test per score-style unit, Benjamini–Hochberg q values over one
comparison's family. The tests themselves are scipy's (`_scipy.py`: imported only when a comparison
is made, in this process or a helper one); this module decides which test applies and what its
answer means.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from enum import Enum

from ._intervals import unit_mean
from ._scipy import scipy_calls

__all__ = ["Significance", "bh_q_values", "fisher_p", "significance_of", "welch_p"]

DEFAULT_ALPHA = 0.05


class Significance(str, Enum):
    SIGNIFICANT = "significant"  # q < α
    WITHIN_NOISE = "within-noise"  # tested, q ≥ α
    UNTESTABLE = "untestable"  # too little evidence on a side to test


@functools.lru_cache(maxsize=65536)
def fisher_p(passed_base: int, n_base: int, passed_new: int, n_new: int) -> float:
    """Fisher's exact test, two-sided, on [[s_base, n_base − s_base], [s_new, n_new − s_new]].
    Cached by table: a comparison of 10 000 units of a few attempts meets few distinct tables."""
    return scipy_calls().fisher([(passed_base, n_base, passed_new, n_new)])[0]


def welch_p(base: Sequence[float], new: Sequence[float]) -> float | None:
    """Welch's t test, two-sided; None with fewer than two values on a side. When both sides have
    zero variance: 1 for equal means, 0 for different ones (the means as `unit_mean` reads them)."""
    if len(base) < 2 or len(new) < 2:
        return None
    if all(x == base[0] for x in base) and all(x == new[0] for x in new):
        return 1.0 if unit_mean(base) == unit_mean(new) else 0.0
    p = scipy_calls().welch([(base, new)])[0]
    return 1.0 if math.isnan(p) else p


def bh_q_values(p_values: Sequence[float]) -> list[float]:
    """Benjamini–Hochberg adjusted p values (scipy's `false_discovery_control`), in input order."""
    if not p_values:
        return []
    return scipy_calls().bh(p_values)


def significance_of(q_value: float | None, alpha: float = DEFAULT_ALPHA) -> Significance:
    if q_value is None:
        return Significance.UNTESTABLE
    return Significance.SIGNIFICANT if q_value < alpha else Significance.WITHIN_NOISE
