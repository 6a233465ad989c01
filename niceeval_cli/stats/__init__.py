"""Statistics (statistics.md): every rate with its uncertainty, comparisons against the noise.

Pure: numbers in, numbers out; no store, no I/O. `scipy.stats` is imported only by the functions
that need a t quantile or a significance test, so a plain `run` never loads it.
"""

from __future__ import annotations

from ._agreement import Agreement, Confusion, agreement_of, cohen_kappa
from ._clustered import ClusteredMean, PairedDifference, clustered_mean, paired_difference
from ._comparing import (
    ExperimentDifference,
    ExperimentEstimate,
    UnitTest,
    experiment_differences,
    experiment_estimates,
    pair_tests,
)
from ._evidence import AttemptLike, evidence_of
from ._intervals import DEFAULT_CONFIDENCE, Interval, pass_at_k, pass_hat_k, t_interval, unit_mean, wilson, z_of
from ._scipy import IN_PROCESS, ScipyCalls, computed_by, scipy_calls
from ._significance import (
    DEFAULT_ALPHA,
    Significance,
    bh_q_values,
    fisher_p,
    significance_of,
    welch_p,
)
from ._tables import EXPERIMENT_COLUMNS, UNIT_COLUMNS, experiment_rows, unit_rows
from ._units import UnitEvidence, UnitStats, unit_stats

__all__ = [
    "DEFAULT_ALPHA",
    "DEFAULT_CONFIDENCE",
    "EXPERIMENT_COLUMNS",
    "IN_PROCESS",
    "UNIT_COLUMNS",
    "Agreement",
    "AttemptLike",
    "ClusteredMean",
    "Confusion",
    "ExperimentDifference",
    "ExperimentEstimate",
    "Interval",
    "PairedDifference",
    "ScipyCalls",
    "Significance",
    "UnitEvidence",
    "UnitStats",
    "UnitTest",
    "agreement_of",
    "bh_q_values",
    "clustered_mean",
    "cohen_kappa",
    "computed_by",
    "evidence_of",
    "experiment_differences",
    "experiment_estimates",
    "experiment_rows",
    "fisher_p",
    "pair_tests",
    "paired_difference",
    "pass_at_k",
    "pass_hat_k",
    "scipy_calls",
    "significance_of",
    "t_interval",
    "unit_mean",
    "unit_rows",
    "unit_stats",
    "welch_p",
    "wilson",
    "z_of",
]
