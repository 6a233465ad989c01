"""The header of `view` and of the run summary: the run, then per experiment what it came to.

Pure: from a RunRow and a RunTally to Lines. Eval-level results come from `fold_pass_eval`,
score totals from `summarize_scores` (through `_tally`); nothing is decided here.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.cells import cell_len

from .. import outcomes
from .._states import AttemptState, EvalKind, RunStatus
from ..store import RunRow
from ._render import (
    STYLES,
    Line,
    blank,
    counts_text,
    exit_text,
    join,
    line,
    name,
    num,
    pad,
    percent,
    plural,
    took,
    when,
)
from ._tally import DEFAULT_PASS_RULE, ExperimentTally, RunTally

MULTI_LIMIT = 20  # evals with several attempts listed in the header
_LABEL_W = 10

_STATUS_STYLE = {
    RunStatus.FINISHED: "green", RunStatus.RUNNING: "cyan", RunStatus.INTERRUPTED: "yellow",
    RunStatus.SETUP_ERROR: "bold red",
}


def run_lines(run: RunRow, tally: RunTally, *, filters: str = "") -> list[Line]:
    status = RunStatus(run.status)
    head = line(("Run ", "bold"), (run.id, "bold"), "  ", (status.value, _STATUS_STYLE.get(status, "")))
    if status is not RunStatus.RUNNING:
        head.text.append(f" · {exit_text(run.exit_code)}")
    out = [head]
    elapsed = took(run.started_at, run.ended_at) if run.ended_at else None
    out.append(line(join([
        f"started {when(run.started_at)}", f"took {elapsed}" if elapsed else "",
        f"niceeval {name(run.niceeval_version)}" if run.niceeval_version else "",
    ]), indent=2))
    if status is RunStatus.RUNNING:
        out.append(line(("still running: the counts below are what has been sealed so far", "cyan"), indent=2))
    attempts = f"{plural(tally.attempts, 'attempt')}: {counts_text(tally.words)}"
    if tally.reused:
        attempts += f" · {tally.reused} reused from earlier runs"
    out.append(line(attempts, indent=2))
    if filters:
        out.append(line(("shown: ", "dim"), filters, indent=2))
    for experiment in tally.experiments:
        out.append(blank())
        out += experiment_lines(experiment)
    multi = multi_attempt_lines(tally)
    if multi:
        out += [blank(), *multi]
    return out


def experiment_lines(experiment: ExperimentTally) -> list[Line]:
    out = [line(("Experiment ", "bold"), (name(experiment.experiment_id), "bold"))]
    if not experiment.evals:
        out.append(line(("no attempts (not dispatched, or filtered out)", "dim"), indent=2))
        return out
    attempt_fold = experiment.attempt_fold()
    if attempt_fold is not None:
        results = experiment.eval_results()
        total = sum(results.values())
        passed = results[AttemptState.PASSED]
        rest = [f"{n} {state}" for state, n in results.items() if n and state is not AttemptState.PASSED]
        style = "green" if passed == total else "bold red"
        out.append(_labelled("evals", [(f"{passed} of {total} passed", style), join(rest)]))
        decided = attempt_fold.passed + attempt_fold.failed + attempt_fold.errored
        out.append(_labelled("attempts", [
            f"{attempt_fold.passed} of {decided} passed ({percent(attempt_fold.pass_rate)})"
        ]))
    summary = experiment.scores()
    if summary is not None:
        out += score_lines(summary)
    return out


def score_lines(summary: outcomes.ScoreSummary) -> list[Line]:
    """`45 of 100 · 50 unavailable · not rankable (1 unrankable)`, then mean/min/max."""
    problems = [f"{summary.unrankable} unrankable" if summary.unrankable else "",
                f"{summary.errored} errored, without a score" if summary.errored else ""]
    listed = ", ".join(p for p in problems if p)
    rankable = (f"not rankable ({listed})", "yellow") if listed else ("rankable", "green")
    totals = f"{num(summary.earned)} of {num(summary.max_score)}"
    if summary.errored == summary.attempts:
        totals = "no score"
    elif summary.unavailable_weight:
        totals += f" · {num(summary.unavailable_weight)} unavailable"
    out = [_labelled("score", [totals, rankable])]
    spread = (f"mean {num(summary.mean)} · min {num(summary.min)} · max {num(summary.max)} over "
              f"{plural(summary.rankable, 'rankable attempt')}") if summary.rankable else "no rankable attempt"
    gates = [f"gate failed in {summary.gate_failed}" if summary.gate_failed else "",
             f"gate unavailable in {summary.gate_unavailable}" if summary.gate_unavailable else ""]
    out.append(_labelled("", [spread, (join(gates), "bold red" if summary.gate_failed else "yellow")]))
    return out


def _labelled(label: str, parts: Sequence[str | tuple[str, str]]) -> Line:
    pieces: list[str | tuple[str, str]] = [(pad(label, _LABEL_W), "dim")]
    first = True
    for part in parts:
        text = part[0] if isinstance(part, tuple) else part
        if not text:
            continue
        if not first:
            pieces.append(" · ")
        pieces.append(part)
        first = False
    return line(*pieces, indent=2)


def multi_attempt_lines(run_tally: RunTally, *, limit: int = MULTI_LIMIT) -> list[Line]:
    """Evals with several attempts where not every attempt passed: eval-level result and attempt
    pass rate, or the score spread. Empty when the run has no eval with several attempts."""
    evals, total = run_tally.multi_attempt_evals()
    if not total:
        return []
    if not evals:
        return [line(("Evals with several attempts: ", "bold"),
                     f"{plural(total, 'eval')}, every attempt passed (or scored cleanly)")]
    note = "worst first" if run_tally.rules_known else f"worst first; folded under pass_rule {DEFAULT_PASS_RULE}"
    out = [line(("Evals with several attempts, not all passing", "bold"), (f" ({note})", "dim"))]
    rows = []
    for tally in evals[:limit]:
        slot = f"{name(tally.experiment_id)} · {name(tally.eval_id)}"
        if tally.kind is EvalKind.PASS:
            fold = tally.fold()
            decided = fold.passed + fold.failed + fold.errored
            word = fold.result.value
            detail = f"{fold.passed} of {decided} attempts passed ({percent(fold.pass_rate)})"
            if run_tally.rules_known:
                detail += f" · pass_rule {tally.rule}"
        else:
            summary = tally.scores()
            word = "scores"
            detail = join([
                plural(summary.attempts, "attempt"),
                f"mean {num(summary.mean)} · min {num(summary.min)} · max {num(summary.max)}",
                f"{summary.unrankable} unrankable" if summary.unrankable else "",
                f"{summary.errored} errored" if summary.errored else "",
                f"gate failed in {summary.gate_failed}" if summary.gate_failed else "",
                f"gate unavailable in {summary.gate_unavailable}" if summary.gate_unavailable else "",
            ])
        rows.append((word, slot, detail))
    word_w = max(cell_len(r[0]) for r in rows)
    slot_w = min(max(cell_len(r[1]) for r in rows), 70)
    for word, slot, detail in rows:
        out.append(line((pad(word, word_w), STYLES.get(word, "")), "  ", pad(slot, slot_w), "  ", detail,
                        indent=2))
    if len(evals) > limit:
        out.append(line((f"… {len(evals) - limit} more evals with several attempts, not all passing", "dim"),
                        indent=2))
    passing = total - len(evals)
    if passing:
        out.append(line((f"{passing} more eval(s) with several attempts passed every attempt", "dim"), indent=2))
    return out
