"""Run view-models → terminal Lines: the header of `view` and of the run summary."""

from __future__ import annotations

from collections.abc import Sequence

from rich.cells import cell_len

from ..._states import RunStatus
from ..viewmodels.run import CaseLine, ExperimentSummary, MultiAttempt, RunHeader, ScoreLines
from ..viewmodels.text import plural
from .lines import STYLES, Line, Part, blank, line, pad

_LABEL_W = 10
_STATUS_STYLE = {
    RunStatus.FINISHED.value: "green", RunStatus.RUNNING.value: "cyan", RunStatus.INTERRUPTED.value: "yellow",
    RunStatus.SETUP_ERROR.value: "bold red",
}


def header_lines(header: RunHeader) -> list[Line]:
    kind = "Group " if header.group else "Run "
    head = line((kind, "bold"), (header.run_id, "bold"), "  ", (header.status, _STATUS_STYLE.get(header.status, "")))
    if header.exit is not None:
        head.text.append(f" · {header.exit}")
    out = [head, line(header.when, indent=2)]
    if header.group:
        out.append(line((header.group, "yellow" if "incomplete" in header.group else ""), indent=2))
        out += [line(("not run  ", "yellow"), slot, indent=4) for slot in header.not_run_slots]
    if header.running:
        out.append(line(("still running: the counts below are what has been sealed so far", "cyan"), indent=2))
    out.append(line(header.attempts, indent=2))
    if header.not_run:
        out.append(line((header.not_run, "yellow"), indent=2))
    if header.filters:
        out.append(line(("shown: ", "dim"), header.filters, indent=2))
    for experiment in header.experiments:
        out.append(blank())
        out += experiment_lines(experiment)
    if header.multi is not None:
        out += [blank(), *multi_attempt_lines(header.multi)]
    return out


def experiment_lines(experiment: ExperimentSummary) -> list[Line]:
    out = [line(("Experiment ", "bold"), (experiment.experiment_id, "bold"))]
    if experiment.empty:
        out.append(line(("no attempts (not dispatched, or filtered out)", "dim"), indent=2))
        return out
    if experiment.evals is not None:
        counts = experiment.evals
        style = "green" if counts.all_passed else "bold red"
        out.append(_labelled("evals", [(f"{counts.passed} of {counts.total} passed", style), counts.rest]))
        out.append(_labelled("attempts", [counts.attempts]))
        if experiment.stats is not None and experiment.stats.pass_rate is not None:
            out.append(_labelled("", [experiment.stats.pass_rate]))
    if experiment.scores is not None:
        out += score_lines(experiment.scores)
        if experiment.stats is not None and experiment.stats.score is not None:
            out.append(_labelled("", [experiment.stats.score]))
    for cases in experiment.cases:
        out += case_lines(cases)
    return out


def case_lines(cases: CaseLine) -> list[Line]:
    """An eval with cases on one line, then its failing cases (worst first) with their case ids."""
    out = [_labelled("cases", [(cases.text, "green" if cases.all_ok else "bold red")])]
    if cases.failing:
        word_w = max(cell_len(word) for word, _ in cases.failing)
        out += [line(pad("", _LABEL_W), (pad(word, word_w), STYLES.get(word, "")), "  ", case_id, indent=4)
                for word, case_id in cases.failing]
    if cases.more:
        out.append(line(pad("", _LABEL_W), (f"… {cases.more} more not passing (niceeval view lists them all)", "dim"),
                        indent=4))
    return out


def score_lines(scores: ScoreLines) -> list[Line]:
    rankable = (scores.rankable, "green" if scores.rankable_ok else "yellow")
    return [
        _labelled("score", [scores.totals, rankable]),
        _labelled("", [scores.spread, (scores.gates, "bold red" if scores.gate_failed else "yellow")]),
    ]


def _labelled(label: str, parts: Sequence[Part]) -> Line:
    pieces: list[Part] = [(pad(label, _LABEL_W), "dim")]
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


def multi_attempt_lines(multi: MultiAttempt) -> list[Line]:
    """Evals with several attempts where not every attempt passed, worst first."""
    if not multi.rows:
        return [line(("Evals with several attempts: ", "bold"),
                     f"{plural(multi.total, 'eval')}, every attempt passed (or scored cleanly)")]
    out = [line(("Evals with several attempts, not all passing", "bold"), (f" ({multi.note})", "dim"))]
    word_w = max(cell_len(r.word) for r in multi.rows)
    slot_w = min(max(cell_len(r.slot) for r in multi.rows), 70)
    for row in multi.rows:
        out.append(line((pad(row.word, word_w), STYLES.get(row.word, "")), "  ", pad(row.slot, slot_w), "  ",
                        row.detail, indent=2))
    if multi.more:
        out.append(line((f"… {multi.more} more evals with several attempts, not all passing", "dim"), indent=2))
    if multi.passing:
        out.append(line((f"{multi.passing} more eval(s) with several attempts passed every attempt", "dim"),
                        indent=2))
    return out
