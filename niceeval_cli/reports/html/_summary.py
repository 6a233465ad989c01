"""The report's header and its experiments side by side, in `view`'s words where it has them."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ..._states import ATTEMPT_WORDS
from ...comparison import AttemptFacts
from ...experiment_totals import ExperimentTotals, experiment_totals
from .. import _tally
from .._safe import visible
from ..data import ReportData
from ..viewmodels.cost import ExperimentCost, experiment_costs
from ..viewmodels.run import ExperimentSummary, run_header
from ..viewmodels.stats import ExperimentStats
from ..viewmodels.text import duration, join, num, percent, when
from ._words import attempt_word


@dataclass(frozen=True)
class Header:
    run_id: str
    started: str
    ended: str
    status: str
    argv: str
    version: str
    attempts: int
    reused: int
    counts: list[tuple[str, int]]  # (word, count), worst first
    exit_text: str  # `exit 1 (a definite failure: 1 eval failed)`, as `view` says it
    cost: str | None  # reported and estimated costs, never added together (agents.md)
    judge_cost: str | None  # the judge's, apart from the system under test's (judge-trust.md)
    took: str  # `started … · took … · niceeval …` (view's header line)
    not_run: str | None  # `16 of 20 planned slots were not run`
    summaries: dict[str, ExperimentSummary]  # view's per-experiment summary, by experiment id


@dataclass(frozen=True)
class ExperimentColumn:
    id: str
    model: str | None
    totals: ExperimentTotals
    pass_rate: str  # evals passed under pass_rule
    attempt_rate: str
    score: str | None  # earned / max · unavailable · not rankable
    mean: str | None
    duration: str
    cost: str
    judge_cost: str | None = None  # the judge's, apart (judge-trust.md)
    stats: ExperimentStats | None = None  # the mean over units with its interval, as the summary says it

    @property
    def interval(self) -> str | None:
        """`pass rate 82% [74%, 88%] over 50 evals` (and the score line), for the experiment table."""
        if self.stats is None:
            return None
        return join([self.stats.pass_rate or "", self.stats.score or ""]) or None


def run_summary(data: ReportData) -> Header:
    run = data.run
    counts: dict[str, int] = {}
    reused = 0
    reported: list[float] = []
    estimated: list[float] = []
    judge_reported: list[float] = []
    judge_estimated: list[float] = []
    for row in data.attempts:
        word = attempt_word(row["state"], row.get("gate"))
        counts[word] = counts.get(word, 0) + 1
        reused += row.get("relation") == "reference"
        if row.get("cost_usd") is not None:
            reported.append(row["cost_usd"])
        if row.get("estimated_cost_usd") is not None:
            estimated.append(row["estimated_cost_usd"])
        if row.get("judge_cost_usd") is not None:
            judge_reported.append(row["judge_cost_usd"])
        if row.get("judge_estimated_cost_usd") is not None:
            judge_estimated.append(row["judge_estimated_cost_usd"])
    # slots that never ran: an eval passing so far is not passed, and the exit's reason says so (as view's)
    missing = _tally.not_run_by_eval(data.not_run_slots)
    view = run_header(run, _tally.tally(data.groups, run.experiments, missing=missing), not_run=run.not_run,
                      confidence=data.confidence)
    return Header(
        run_id=run.id,
        started=when(run.started_at),
        ended=when(run.ended_at),
        status=str(run.status.value),
        argv=visible(" ".join(["niceeval", *run.argv]), 400, single_line=True),
        version=run.niceeval_version or "—",
        attempts=len(data.attempts),
        reused=reused,
        counts=[(w, counts[w]) for w in ATTEMPT_WORDS if w in counts],
        exit_text=view.exit or "running: no exit code yet",
        cost=join([f"${math.fsum(reported):.4f} reported" if reported else "",
                   f"${math.fsum(estimated):.4f} estimated from prices" if estimated else ""]) or None,
        judge_cost=join([
            f"${math.fsum(judge_reported):.4f} reported" if judge_reported else "",
            f"${math.fsum(judge_estimated):.4f} estimated from prices" if judge_estimated else "",
        ]) or None,
        took=view.when,
        not_run=view.not_run,
        summaries={s.experiment_id: s for s in view.experiments},
    )


def experiment_ids(data: ReportData) -> list[str]:
    seen = [a["experiment_id"] for a in data.attempts]
    return list(dict.fromkeys([e for e in data.run.experiments if e in set(seen)] + sorted(set(seen))))


def experiment_costs_by_id(data: ReportData) -> dict[str, ExperimentCost]:
    """Each experiment's reported and estimated cost, in the words `view` and `run` print them."""
    return {row["experiment_id"]: found[0] for row in data.costs if (found := experiment_costs([row]))}


def experiment_column(experiment: str, facts: Sequence[AttemptFacts], model: str | None,
            summary: ExperimentSummary | None = None, cost: ExperimentCost | None = None) -> ExperimentColumn:
    t = experiment_totals(facts, experiment)
    score = mean = None
    lines = summary.scores if summary is not None else None
    if lines is not None:  # view's own words for the same totals
        score = join([lines.totals, lines.rankable, lines.gates])
        mean = lines.spread
    elif t.score_attempts:
        score = f"{num(t.earned)} of {num(t.max_score)}"
        if t.unavailable_weight:
            score += f" · {num(t.unavailable_weight)} unavailable"
        if t.unrankable or t.rankable < t.score_attempts:
            score += " · not rankable"
        mean = "no rankable score"
        if t.mean_score is not None:
            mean = f"{num(t.mean_score)} mean over {t.rankable} rankable"
    undecided = f" · {t.pass_evals_undecided} undecided" if t.pass_evals_undecided else ""
    rate = "—"
    if t.pass_evals_decided:
        rate = f"{percent(t.eval_pass_rate)} ({t.pass_evals_passed}/{t.pass_evals_decided} evals{undecided})"
    elif t.pass_evals:
        rate = f"— (no decided eval{undecided})"
    decided = t.pass_attempts - t.attempts_errored
    errored = f" · {t.attempts_errored} errored, not counted" if t.attempts_errored else ""
    attempt_rate = f"{percent(t.attempt_pass_rate)} ({t.attempts_passed}/{decided}){errored}" if decided else (
        f"— ({t.attempts_errored} errored, not counted)" if t.attempts_errored else "—"
    )
    return ExperimentColumn(
        id=experiment, model=model, totals=t, pass_rate=rate, attempt_rate=attempt_rate, score=score, mean=mean,
        duration=duration(t.duration_ms), cost=(cost.text or "—") if cost is not None else "—",
        judge_cost=cost.judge_text or None if cost is not None else None,
        stats=summary.stats if summary is not None else None,
    )
