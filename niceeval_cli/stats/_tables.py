"""`query units` and `query experiments` rows (statistics.md, "Where it shows"), from attempt rows.

Pure: the attempt rows a reader already has (kind, state, gate, score, max_score, experiment,
eval and case ids) in, one row per unit or per (experiment, style) out, in first-seen order.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ._comparing import experiment_estimates
from ._evidence import evidence_of
from ._intervals import DEFAULT_CONFIDENCE
from ._units import unit_stats

__all__ = ["EXPERIMENT_COLUMNS", "UNIT_COLUMNS", "experiment_rows", "unit_rows", "units_of"]

UNIT_COLUMNS = (
    "experiment_id", "eval_id", "case_id", "decided", "passed", "errored", "rate", "low", "high", "k",
    "pass_at_k", "pass_hat_k", "flaky", "mean_score", "score_low", "score_high",
)
EXPERIMENT_COLUMNS = (
    "experiment_id", "style", "n_units", "undecided_units", "estimate", "se", "low", "high", "clustered",
)


@dataclass(frozen=True, slots=True)
class _Row:
    """An attempt row read by attribute (what `evidence_of` reads)."""

    kind: str
    state: str
    gate: str | None
    score: float | None
    max_score: float | None


UnitKey = tuple[str, str, str | None]


def units_of(attempts: Iterable[Mapping[str, Any]]) -> dict[UnitKey, list[_Row]]:
    """Attempt rows grouped by unit: (experiment, eval id, case id), in first-seen order."""
    units: dict[UnitKey, list[_Row]] = {}
    for a in attempts:
        key = (a["experiment_id"], a["eval_id"], a.get("case_id"))
        units.setdefault(key, []).append(
            _Row(a["kind"], a["state"], a.get("gate"), a.get("score"), a.get("max_score")))
    return units


def _cluster(eval_id: str, case_id: str | None) -> str:
    """The eval a case unit belongs to: its cluster (`refunds` for `refunds[r-017]`)."""
    if case_id is not None and eval_id.endswith(f"[{case_id}]"):
        return eval_id[: -len(case_id) - 2]
    return eval_id


def unit_rows(attempts: Iterable[Mapping[str, Any]], *, confidence: float = DEFAULT_CONFIDENCE,
              k: int | None = None) -> list[dict[str, Any]]:
    """One row per unit. `k` defaults to the unit's own number of attempts (its configured attempts)."""
    rows = []
    for (experiment_id, eval_id, case_id), attempts_of in units_of(attempts).items():
        evidence = evidence_of(attempts_of)
        unit_k = k if k is not None else len(attempts_of)
        found = unit_stats(evidence, k=unit_k, confidence=confidence)
        is_pass = evidence.style == "pass"
        interval = found.interval
        rows.append({
            "experiment_id": experiment_id, "eval_id": eval_id, "case_id": case_id,
            "decided": evidence.decided, "passed": evidence.passed if is_pass else None,
            "errored": evidence.not_counted,
            "rate": found.rate if is_pass else None,
            "low": interval.low if is_pass and interval is not None else None,
            "high": interval.high if is_pass and interval is not None else None,
            "k": unit_k, "pass_at_k": found.pass_at_k, "pass_hat_k": found.pass_hat_k,
            "flaky": found.flaky if is_pass else None,
            "mean_score": None if is_pass else found.rate,
            "score_low": interval.low if not is_pass and interval is not None else None,
            "score_high": interval.high if not is_pass and interval is not None else None,
        })
    return rows


def experiment_rows(attempts: Iterable[Mapping[str, Any]], *,
                    confidence: float = DEFAULT_CONFIDENCE) -> list[dict[str, Any]]:
    """One row per (experiment, style): the mean over its units with evidence, clustered by eval."""
    units = [(experiment_id, _cluster(eval_id, case_id), evidence_of(rows))
             for (experiment_id, eval_id, case_id), rows in units_of(attempts).items()]
    out = []
    for estimate in experiment_estimates(units, confidence):
        summary = estimate.summary
        out.append({
            "experiment_id": estimate.experiment_id, "style": estimate.style,
            "n_units": 0 if summary is None else summary.n_units,
            "undecided_units": estimate.undecided_units,
            "estimate": None if summary is None else summary.estimate,
            "se": None if summary is None else summary.se,
            "low": None if summary is None or summary.interval is None else summary.interval.low,
            "high": None if summary is None or summary.interval is None else summary.interval.high,
            "clustered": False if summary is None else summary.clustered,
        })
    return out
