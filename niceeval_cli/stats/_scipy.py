"""The four things statistics asks of `scipy.stats`, and where they are computed.

Fisher's exact test, Welch's t test, Benjamini–Hochberg and the Student t quantile are scipy's
(statistics.md: none of them hand-written). Importing `scipy.stats` costs about a second of CPU,
as much as a large `compare` spends on everything else, so a caller may have them computed
elsewhere — `app/tests_process.py` imports scipy in a helper process while this one reads the
store — by installing another `ScipyCalls` around its work (`computed_by`). Whatever computes
them, the numbers are scipy's own; the default imports scipy here, at the first call.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Protocol

__all__ = ["IN_PROCESS", "InProcess", "ScipyCalls", "computed_by", "scipy_calls"]

#: (passed_base, n_base, passed_new, n_new): one pass-style pair's 2 × 2 table, by its counts.
Table = tuple[int, int, int, int]


class ScipyCalls(Protocol):
    """What the statistics take from scipy, each on a batch (one call, however many values)."""

    def fisher(self, tables: Sequence[Table]) -> list[float]:
        """Two-sided p of Fisher's exact test on [[s_b, n_b − s_b], [s_n, n_n − s_n]], per table."""
        ...

    def welch(self, samples: Sequence[tuple[Sequence[float], Sequence[float]]]) -> list[float]:
        """Two-sided p of Welch's t test (scipy's value, NaN included), per (base, new)."""
        ...

    def bh(self, p_values: Sequence[float]) -> list[float]:
        """Benjamini–Hochberg adjusted p values of one family, in input order."""
        ...

    def t_ppf(self, points: Sequence[tuple[float, int]]) -> list[float]:
        """The Student t quantile, per (probability, degrees of freedom)."""
        ...


class InProcess:
    """scipy in this process, imported at the first call."""

    def fisher(self, tables: Sequence[Table]) -> list[float]:
        from scipy import stats

        return [float(stats.fisher_exact([[sb, nb - sb], [sn, nn - sn]], alternative="two-sided").pvalue)
                for sb, nb, sn, nn in tables]

    def welch(self, samples: Sequence[tuple[Sequence[float], Sequence[float]]]) -> list[float]:
        from scipy import stats

        return [float(stats.ttest_ind(list(base), list(new), equal_var=False).pvalue) for base, new in samples]

    def bh(self, p_values: Sequence[float]) -> list[float]:
        from scipy import stats

        return [float(q) for q in stats.false_discovery_control(list(p_values), method="bh")]

    def t_ppf(self, points: Sequence[tuple[float, int]]) -> list[float]:
        from scipy import stats

        return [float(stats.t.ppf(probability, df)) for probability, df in points]


IN_PROCESS = InProcess()

_current: ContextVar[ScipyCalls] = ContextVar("niceeval_scipy_calls", default=IN_PROCESS)


def scipy_calls() -> ScipyCalls:
    """What computes the scipy values for this context (this process's scipy unless a caller
    installed another)."""
    return _current.get()


@contextmanager
def computed_by(calls: ScipyCalls) -> Iterator[None]:
    """Within the block (this thread's context), the scipy values come from `calls`."""
    token = _current.set(calls)
    try:
        yield
    finally:
        _current.reset(token)
