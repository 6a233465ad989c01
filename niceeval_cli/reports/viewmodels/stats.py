"""The statistics of a run's summary and `view` (statistics.md, "Where it shows"), as text.

Per experiment, the mean over its units with its clustered interval (`pass rate 82% [74%, 88%]
over 50 evals`, the score line likewise) and how many units are flaky; per unit with several
attempts, `3/5 passed · 60% [23%, 88%] · flaky`. Errored attempts are said beside, never counted.

Built from the `RunTally` a summary already holds, so a plain run pays a loop over its evals and
no more: pass-style figures need only `statistics.NormalDist`. A score-style unit's t interval
needs scipy's t quantile, loaded only when such a unit has two differing scores.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

from ... import stats
from ..._states import AttemptState, EvalKind, GateState
from .._tally import EvalTally, ExperimentTally
from .text import percent, plural

__all__ = ["ExperimentStats", "counts_text", "experiment_stats", "interval_text", "unit_evidence", "unit_text"]


def interval_text(interval: stats.Interval | None) -> str:
    """` [74%, 88%]`; empty without an interval (fewer than two units or attempts)."""
    return "" if interval is None else f" [{percent(interval.low)}, {percent(interval.high)}]"


def unit_evidence(tally: EvalTally) -> stats.UnitEvidence:
    """One unit's evidence from its tally: pass-style counts; score-style score / max of each
    scored attempt with a positive maximum and an available gate (statistics.md)."""
    if tally.kind is EvalKind.PASS:
        return stats.UnitEvidence("pass", tally.passed, tally.failed, not_counted=tally.errored)
    scores: list[float] = []
    not_counted = 0
    for group in tally.groups:
        if (group.state is AttemptState.SCORED and group.gate is not GateState.UNAVAILABLE
                and group.score is not None and group.max_score is not None and group.max_score > 0):
            scores += [min(1.0, max(0.0, float(group.score) / float(group.max_score)))] * group.total
        else:
            not_counted += group.total
    return stats.UnitEvidence("score", scores=tuple(scores), not_counted=not_counted)


def counts_text(passed: int, failed: int, errored: int, confidence: float = stats.DEFAULT_CONFIDENCE) -> str:
    """`3/5 · 60% [23%, 88%]` over decided attempts (errored ones beside, never counted)."""
    n = passed + failed
    errored_text = f" · {errored} errored, not counted" if errored else ""
    if not n:
        return f"no decided attempt{errored_text}"
    return f"{passed}/{n} · {percent(passed / n)}{interval_text(stats.wilson(passed, n, confidence))}{errored_text}"


def _numeric_rule(tally: EvalTally) -> float | None:
    rule = tally.rule
    return float(rule) if isinstance(rule, (int, float)) and not isinstance(rule, bool) else None


def unit_text(tally: EvalTally, confidence: float = stats.DEFAULT_CONFIDENCE) -> str:
    """`3/5 passed · 60% [23%, 88%] · flaky · within noise of pass_rule 0.6 · 2 errored, not counted`.

    "within noise" when the unit's interval contains its numeric pass rule (low < r ≤ high):
    its point verdict could go either way with more attempts."""
    evidence = unit_evidence(tally)
    n = evidence.decided
    errored = f"{evidence.not_counted} errored, not counted" if evidence.not_counted else ""
    if evidence.style == "pass":
        if not n:
            return " · ".join(p for p in ("no decided attempt", errored) if p)
        interval = stats.wilson(evidence.passed, n, confidence)
        rule = _numeric_rule(tally)
        parts = [f"{evidence.passed}/{n} passed", f"{percent(evidence.passed / n)}{interval_text(interval)}",
                 "flaky" if evidence.passed and evidence.failed else "",
                 "within noise" if rule is not None and interval is not None
                 and interval.contains(rule) else "",
                 errored]
        return " · ".join(p for p in parts if p)
    if not n:
        return "no decided attempt"
    found = stats.unit_stats(evidence, k=n, confidence=confidence)
    # the score row lists its errored / unrankable attempts itself
    return f"mean score {percent(found.rate)} of max{interval_text(found.interval)} over {plural(n, 'decided attempt')}"


@dataclass(frozen=True)
class ExperimentStats:
    """`pass rate 82% [74%, 88%] over 50 evals · 3 flaky`, and the score line likewise (None when
    the experiment has no unit of that style)."""

    pass_rate: str | None
    score: str | None
    pass_estimate: stats.ExperimentEstimate | None = None  # the numbers behind `pass_rate` (report error bars)
    score_estimate: stats.ExperimentEstimate | None = None


def _line(label: str, estimate: stats.ExperimentEstimate, extra: str = "") -> str:
    summary = estimate.summary
    undecided = (f"{plural(estimate.undecided_units, 'eval')} undecided, not in the mean"
                 if estimate.undecided_units else "")
    if summary is None:
        head = f"{label} — no eval with a decided attempt"
    else:
        over = plural(summary.n_units, "eval")
        head = f"{label} {percent(summary.estimate)}{interval_text(summary.interval)} over {over}"
    return " · ".join(p for p in (head, extra, undecided) if p)


def experiment_stats(experiment: ExperimentTally, confidence: float = stats.DEFAULT_CONFIDENCE) -> ExperimentStats:
    """The experiment's mean over its units of each style, clustered by eval (a dataset eval's
    cases form one cluster); evals counted without being listed (every attempt passed, no cases)
    are units of rate 1, each its own cluster."""
    units: list[tuple[str, Hashable, stats.UnitEvidence]] = []
    flaky = 0
    for tally in experiment.evals:
        evidence = unit_evidence(tally)
        flaky += evidence.style == "pass" and evidence.passed > 0 and evidence.failed > 0
        units.append((experiment.experiment_id, tally.base_id, evidence))
    alone = []
    if experiment.counted:  # as many units, each its own cluster: a count, not 20 000 entries
        each = experiment.counted_attempts // experiment.counted
        alone.append((experiment.experiment_id, stats.UnitEvidence("pass", each), experiment.counted))
    pass_line = score_line = None
    pass_estimate = score_estimate = None
    for estimate in stats.experiment_estimates(units, confidence, alone=alone):
        if estimate.style == "pass":
            pass_line, pass_estimate = _line("pass rate", estimate, f"{flaky} flaky" if flaky else ""), estimate
        else:
            score_line, score_estimate = _line("mean score", estimate), estimate
    return ExperimentStats(pass_line, score_line, pass_estimate, score_estimate)
