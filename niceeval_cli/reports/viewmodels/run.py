"""A run shaped for display: its header, per-experiment results, evals with several attempts,
the count line that explains the exit code, and the reuse line. Built from a `RunTally`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ... import outcomes
from ..._errors import ExitCode
from ..._states import AttemptState, Derived, EvalKind, GateState, PlanReason, RunStatus
from ...stats import DEFAULT_CONFIDENCE
from ...store.rows import PlanSlot, RunRow
from .._tally import DEFAULT_PASS_RULE, CasesTally, EvalTally, ExperimentTally, RunTally, attempt_word
from .stats import ExperimentStats, experiment_stats, unit_text
from .text import counts_text, exit_text, join, name, num, percent, plural, took, when

MULTI_LIMIT = 20  # evals with several attempts listed in the header


#: An eval whose interval still contains its rule after `run --until-decided` (statistics.md).
UNDECIDED_WORD = "undecided"

# ── the count line: evals under their pass rule, score attempts, and why the exit code ───


@dataclass(frozen=True)
class RunCountLine:
    """`2 evals: 1 passed, 1 failed · 3 score attempts: 2 scored, 1 gate failed`, and `because`:
    the definite failures (exit 1) or undecided items (exit 5) behind the exit code."""

    evals: dict[str, int]  # pass-style evals folded under their pass_rule: passed / failed / errored
    score_attempts: dict[str, int]  # attempt_word → n for score-style attempts
    because: str  # "1 eval failed, 1 gate failed"; "" when nothing needs explaining

    @property
    def text(self) -> str:
        parts = []
        if self.evals:
            parts.append(f"{plural(sum(self.evals.values()), 'eval')}: {counts_text(self.evals)}")
        if self.score_attempts:
            parts.append(f"{plural(sum(self.score_attempts.values()), 'score attempt')}: "
                         f"{counts_text(self.score_attempts)}")
        return join(parts) or "nothing sealed"


#: A score attempt's words (`_states.ATTEMPT_WORDS`) in the order the count line says them: a failed
#: gate, a definite failure, before an unrankable attempt.
_SCORE_WORDS = (AttemptState.ERRORED.value, Derived.ERRORED_GATE_FAILED.label, Derived.GATE_FAILED.label,
                AttemptState.UNRANKABLE.value, Derived.UNRANKABLE_GATE_FAILED.label, Derived.GATE_UNAVAILABLE.label,
                AttemptState.SCORED.value)


def count_line(tally: RunTally, exit_code: int | None) -> RunCountLine:
    evals = dict.fromkeys((AttemptState.FAILED.value, AttemptState.ERRORED.value, UNDECIDED_WORD,
                           AttemptState.PASSED.value), 0)
    for experiment in tally.experiments:
        for state, n in experiment.eval_results().items():
            evals[state.value] += n
        # evals whose interval still contains their rule (run --until-decided): folded like
        # errored for the exit code, said as what they are
        undecided = experiment.undecided_evals()
        evals[AttemptState.ERRORED.value] -= undecided
        evals[UNDECIDED_WORD] += undecided
    score = {w: 0 for w in _SCORE_WORDS}
    gates_failed = gates_unavailable = 0  # in any score attempt, unrankable ones included
    for experiment in tally.experiments:
        for group in experiment.score_groups():
            word = attempt_word(group.state, group.gate)
            score[word] = score.get(word, 0) + group.total
            gates_failed += group.total if group.gate is GateState.FAILED else 0
            gates_unavailable += group.total if group.gate is GateState.UNAVAILABLE else 0
    evals = {w: n for w, n in evals.items() if n}
    score = {w: n for w, n in score.items() if n}
    because = ""
    if exit_code == ExitCode.FAILED:
        because = ", ".join(p for p in (
            plural(evals["failed"], "eval") + " failed" if evals.get("failed") else "",
            plural(gates_failed, "gate") + " failed" if gates_failed else "",
        ) if p)
    elif exit_code == ExitCode.UNDECIDED:
        passed_so_far = tally.passed_so_far()
        because = ", ".join(p for p in (
            plural(evals["errored"], "eval") + " errored" if evals.get("errored") else "",
            plural(evals[UNDECIDED_WORD], "eval") + " undecided (insufficient evidence)"
            if evals.get(UNDECIDED_WORD) else "",
            plural(score["errored"], "score attempt") + " errored" if score.get("errored") else "",
            f"{score['unrankable']} unrankable" if score.get("unrankable") else "",
            plural(gates_unavailable, "gate") + " unavailable" if gates_unavailable else "",
            # failed, yet not definitely: attempts that never ran could still change it (outcomes.settled_verdict)
            plural(evals["failed"], "eval") + " failed so far, but attempts that never ran could still change "
            + ("it" if evals["failed"] == 1 else "them") if evals.get("failed") else "",
            plural(passed_so_far, "eval") + " passed so far, but attempts that never ran could still change "
            + ("it" if passed_so_far == 1 else "them") if passed_so_far else "",
        ) if p)
    return RunCountLine(evals, score, because)


# ── the header ───────────────────────────────────────────────────────────────────────────


@dataclass(frozen=True)
class RunHeader:
    run_id: str
    status: str  # RunStatus value
    exit: str | None  # `exit 1 (a definite failure: 1 gate failed)`; None while running
    when: str  # `started … · took … · niceeval …`
    running: bool
    attempts: str  # `3 attempts: 2 failed, 1 passed · 1 reused from earlier runs`
    not_run: str | None  # `16 of 20 planned slots were not run`; None when unknown or none
    filters: str
    experiments: tuple[ExperimentSummary, ...]
    multi: MultiAttempt | None
    group: str | None = None  # a shard group: `complete · shards merged 3 of 3 · 30 planned`
    not_run_slots: tuple[str, ...] = ()  # a group's slots that no shard filled, as `exp · eval#n`


def not_run_text(not_run: int | None, sealed: int) -> str | None:
    if not not_run:
        return None
    return f"{not_run} of {not_run + sealed} planned slots were not run"


def group_text(run: RunRow) -> str | None:
    """What a shard group is made of (scale.md): shards merged K of N and exact denominators."""
    if not run.is_group:
        return None
    planned = f"{run.planned_total} planned" if run.planned_total is not None else "plan unknown"
    missing = f", {run.not_run} not run (never counted passed, failed or undecided)" if run.not_run else ""
    shards = f"shards merged {run.shards_merged} of {run.shard_count}"
    return f"shard group · {run.group_status} · {shards} · {planned}{missing}"


NOT_RUN_SHOWN = 20


def run_header(
    run: RunRow, tally: RunTally, *, filters: str = "", not_run: int | None = None,
    not_run_slots: Sequence[PlanSlot] = (), confidence: float = DEFAULT_CONFIDENCE,
) -> RunHeader:
    status = RunStatus(run.status)
    running = status is RunStatus.RUNNING
    exit_ = None if running else exit_text(run.exit_code, count_line(tally, run.exit_code).because)
    elapsed = took(run.started_at, run.ended_at) if run.ended_at else None
    started = join([
        f"started {when(run.started_at)}", f"took {elapsed}" if elapsed else "",
        f"niceeval {name(run.niceeval_version)}" if run.niceeval_version else "",
    ])
    attempts = f"{plural(tally.attempts, 'attempt')}: {counts_text(tally.words)}"
    if tally.reused:
        attempts += f" · {tally.reused} reused from earlier runs"
    return RunHeader(
        run.id, status.value, exit_, started, running, attempts, not_run_text(not_run, tally.attempts), filters,
        tuple(experiment_summary(x, confidence) for x in tally.experiments),
        multi_attempt(tally, confidence=confidence), group_text(run),
        tuple(f"{p.experiment_id} · {p.eval_id}#{p.ordinal}" for p in not_run_slots[:NOT_RUN_SHOWN])
        + ((f"… and {len(not_run_slots) - NOT_RUN_SHOWN} more",) if len(not_run_slots) > NOT_RUN_SHOWN else ()),
    )


# ── per experiment ───────────────────────────────────────────────────────────────────────


@dataclass(frozen=True)
class EvalCounts:
    """`evals 1 of 2 passed · 1 failed` and `attempts 3 of 5 passed (60%) · 1 errored, not counted`
    (the attempt-level pass rate is s / n over decided attempts, statistics.md)."""

    passed: int
    total: int
    rest: str  # "1 failed, 1 errored"
    attempts: str

    @property
    def all_passed(self) -> bool:
        return self.passed == self.total


@dataclass(frozen=True)
class ScoreLines:
    """`score 9 of 10 · rankable`, then the spread: raw when every eval has the same maximum,
    else normalised (score / max, as a percentage), and said so."""

    totals: str
    rankable: str
    rankable_ok: bool
    spread: str
    gates: str
    gate_failed: bool
    normalised: bool


@dataclass(frozen=True)
class CaseLine:
    """`refunds: 47 of 50 cases passed · 2 failed, 1 errored`, then the failing cases, worst first."""

    text: str
    all_ok: bool
    failing: tuple[tuple[str, str], ...]  # (word, case id), at most CASES_LISTED
    more: int  # failing cases left out


#: Failing cases listed under their eval in the summary and `view`; the rest are counted.
CASES_LISTED = 10


def case_line(group: CasesTally, *, limit: int = CASES_LISTED) -> CaseLine:
    word = "passed" if group.kind is EvalKind.PASS else "scored"
    failing = group.failing()
    counts: dict[str, int] = {}
    for case in failing:
        counts[case.word] = counts.get(case.word, 0) + 1
    text = f"{name(group.eval_id)}: {group.ok} of {plural(len(group.cases), 'case')} {word}"
    if counts:
        text += " · " + counts_text(counts)
    listed = tuple((case.word, name(case.case_id or "")) for case in failing[:limit])
    return CaseLine(text, not failing, listed, max(0, len(failing) - limit))


@dataclass(frozen=True)
class ExperimentSummary:
    experiment_id: str
    evals: EvalCounts | None  # None: no pass-style eval
    scores: ScoreLines | None  # None: no score-style eval
    empty: bool  # no attempts (not dispatched, or filtered out)
    cases: tuple[CaseLine, ...] = ()  # one per eval with cases (datasets.md)
    stats: ExperimentStats | None = None  # the mean over units with its interval (statistics.md)


def attempts_text(passed: int, failed: int, errored: int) -> str:
    """`3 of 5 passed (60%) · 1 errored, not counted`: s / n over decided attempts, errored beside."""
    decided = passed + failed
    head = f"{passed} of {decided} passed ({percent(passed / decided)})" if decided else "no decided attempt"
    return join([head, f"{errored} errored, not counted" if errored else ""])


def experiment_summary(experiment: ExperimentTally, confidence: float = DEFAULT_CONFIDENCE) -> ExperimentSummary:
    if not experiment.evals and not experiment.counted:
        return ExperimentSummary(name(experiment.experiment_id), None, None, True)
    counts = None
    attempt_fold = experiment.attempt_fold()
    if attempt_fold is not None:
        results = experiment.eval_results()
        words = {state.value: n for state, n in results.items()}
        undecided = experiment.undecided_evals()
        words[AttemptState.ERRORED.value] -= undecided
        words[UNDECIDED_WORD] = undecided
        rest = ", ".join(f"{n} {word}" for word, n in words.items() if n and word != AttemptState.PASSED.value)
        counts = EvalCounts(results[AttemptState.PASSED], sum(results.values()), rest,
                            attempts_text(attempt_fold.passed, attempt_fold.failed, attempt_fold.errored))
    summary = experiment.scores()
    scores = None
    if summary is not None:
        scores = score_lines(summary, _normalised(experiment.evals))
    cases = tuple(case_line(group) for group in experiment.case_groups())
    return ExperimentSummary(name(experiment.experiment_id), counts, scores, False, cases,
                             experiment_stats(experiment, confidence))


def _normalised(evals: Sequence[EvalTally]) -> list[float] | None:
    """score / max of each rankable attempt when the score evals' maxima differ; None when they agree."""
    groups = [g for e in evals if e.kind is EvalKind.SCORE for g in e.groups]
    maxima = {g.max_score for g in groups if g.max_score}
    if len(maxima) <= 1:
        return None
    return [g.score / g.max_score for g in groups
            if g.state is AttemptState.SCORED and g.score is not None and g.max_score
            for _ in range(g.total)]


def score_lines(summary: outcomes.ScoreSummary, normalised: list[float] | None = None) -> ScoreLines:
    problems = [f"{summary.unrankable} unrankable" if summary.unrankable else "",
                f"{summary.errored} errored, without a score" if summary.errored else ""]
    listed = ", ".join(p for p in problems if p)
    totals = f"{num(summary.earned)} of {num(summary.max_score)}"
    if summary.errored == summary.attempts:
        totals = "no score"
    elif summary.unavailable_weight:
        totals += f" · {num(summary.unavailable_weight)} unavailable"
    over = plural(summary.rankable, "rankable attempt")
    if not summary.rankable:
        spread = "no rankable attempt"
    elif normalised:
        mean = sum(normalised) / len(normalised)
        spread = (f"mean {percent(mean)} · min {percent(min(normalised))} · max {percent(max(normalised))} "
                  f"of each eval's max (maxima differ) over {over}")
    else:
        spread = f"mean {num(summary.mean)} · min {num(summary.min)} · max {num(summary.max)} over {over}"
    gates = join([f"gate failed in {summary.gate_failed}" if summary.gate_failed else "",
                  f"gate unavailable in {summary.gate_unavailable}" if summary.gate_unavailable else ""])
    return ScoreLines(totals, f"not rankable ({listed})" if listed else "rankable", not listed, spread, gates,
                      bool(summary.gate_failed), bool(normalised))


# ── evals with several attempts ──────────────────────────────────────────────────────────


@dataclass(frozen=True)
class EvalFoldRow:
    """`passed  exp · eval  passed under pass_rule any: 1 of 3 attempts passed (33%)`."""

    word: str  # the eval's result (pass-style) or "scores"
    slot: str
    detail: str


@dataclass(frozen=True)
class MultiAttempt:
    rows: tuple[EvalFoldRow, ...]  # worst first; empty when every eval with several attempts passed
    total: int  # evals with several attempts
    note: str  # how they were folded
    more: int  # rows left out (beyond the limit)
    passing: int  # evals with several attempts that passed every attempt


def multi_attempt(run_tally: RunTally, *, limit: int = MULTI_LIMIT,
                  confidence: float = DEFAULT_CONFIDENCE) -> MultiAttempt | None:
    evals, total = run_tally.multi_attempt_evals()
    if not total:
        return None
    note = "worst first" if run_tally.rules_known else f"worst first; folded under pass_rule {DEFAULT_PASS_RULE}"
    rows = []
    for tally in evals[:limit]:
        slot = f"{name(tally.experiment_id)} · {name(tally.eval_id)}"
        if tally.kind is EvalKind.PASS:
            fold = tally.fold()
            word = fold.result.value
            detail = f"{word} under pass_rule {tally.rule}: {unit_text(tally, confidence)}"
            if fold.undecided and isinstance(tally.rule, outcomes.IntervalRule):
                word = UNDECIDED_WORD
                detail = (f"{outcomes.undecided_text(fold.passed, fold.failed, tally.rule)} under pass_rule "
                          f"{tally.rule.rate:g}, run until decided" + (
                              f" · {fold.errored} errored, not counted" if fold.errored else ""))
        else:
            summary = tally.scores()
            word = "scores"
            detail = join([
                plural(summary.attempts, "attempt"),
                f"mean {num(summary.mean)} · min {num(summary.min)} · max {num(summary.max)}",
                unit_text(tally, confidence),
                f"{summary.unrankable} unrankable" if summary.unrankable else "",
                f"{summary.errored} errored, not counted" if summary.errored else "",
                f"gate failed in {summary.gate_failed}" if summary.gate_failed else "",
                f"gate unavailable in {summary.gate_unavailable}" if summary.gate_unavailable else "",
            ])
        rows.append(EvalFoldRow(word, slot, detail))
    return MultiAttempt(tuple(rows), total, note, max(0, len(evals) - limit), total - len(evals))


# ── the reuse line of the run summary ────────────────────────────────────────────────────

_REASON_TEXT = {
    PlanReason.PREVIOUS_ERRORED: ("previous attempt errored", "previous attempts errored", "run again"),
    PlanReason.PREVIOUS_UNRANKABLE: ("previous attempt was unrankable", "previous attempts were unrankable",
                                     "run again"),
    PlanReason.FINGERPRINT_CHANGED: ("slot changed since it was sealed", "slots changed since they were sealed",
                                     "fingerprint differs"),
    PlanReason.TIMEOUT_CHANGED: ("previous attempt ran longer than the timeout",
                                 "previous attempts ran longer than the timeout", "run again"),
    PlanReason.RERUN: ("slot did not pass earlier", "slots did not pass earlier", "--rerun"),
    PlanReason.KEEP_SANDBOX: ("result run again so its sandbox can be kept",
                              "results run again so their sandboxes can be kept", "--keep-sandbox"),
    PlanReason.NEW: ("slot is new", "slots are new", "nothing sealed earlier"),
}


def reuse_text(reused: int, reasons: dict[str, int], mode: str) -> str:
    """Why results were or were not reused, from the plan's reasons (config.md, "Reuse")."""
    regraded = reasons.get(PlanReason.REGRADE.value, 0)
    if regraded:  # a `niceeval regrade` run: nothing executed, judges asked again
        return (f"{regraded} attempt(s) regraded from their stored judge inputs (no system under test, no eval "
                f"code){f'; {reused} without a judge assertion adopted as they were' if reused else ''}.")
    parts = []
    for reason, (one, many, why) in _REASON_TEXT.items():
        n = reasons.get(reason.value, 0)
        if n and reason is not PlanReason.NEW:
            parts.append(f"{n} {one if n == 1 else many}, {why}")
    if reused:
        text = (f"{reused} result(s) reused from earlier runs (same fingerprint); "
                "`niceeval run --rerun` reruns what did not pass, `--rerun-all` everything.")
        return text + (f" Not reused: {'; '.join(parts)}." if parts else "")
    if mode == "all":
        return "nothing reused: --rerun-all."
    if not parts:
        return "0 results reused (nothing sealed earlier had the same fingerprint)."
    return "nothing reused: " + "; ".join(parts) + "."


def config_only_note(experiments: Sequence[str]) -> str | None:
    """The once-per-run note for reused results whose system under test NiceEval cannot see
    (config.md, "The system under test's identity")."""
    if not experiments:
        return None
    one = len(experiments) == 1
    names = ", ".join(experiments)
    table = f"[experiments.{experiments[0]}]" if one else "each one's [experiments.<id>] table"
    return (f"note: reused results of experiment{'' if one else 's'} {names} are identified by configuration "
            f"only: the system under test behind {'its' if one else 'their'} adapter (a service, a custom adapter) "
            "is out of NiceEval's sight, so changing it does not run them again. Declare "
            '`version_command = "git rev-parse HEAD"` (or `inputs = ["app/**/*.py"]`, `version = "..."`) '
            f"in {table} of niceeval.toml to make it part of the fingerprint.")


def unavailable_records_note(counts: Sequence[tuple[str, int]], run_id: str | None = None) -> str | None:
    """The note of a run whose checks recorded without deciding (no `.gate()` in a pass-style eval)
    could not be measured, counted by reason: no verdict rests on them, so nothing else says so.
    The run summary's (the latest run: `query` needs no `--run`) and `view`'s (any run: `run_id`)."""
    if not counts:
        return None
    reasons = ", ".join(f"{name(reason)} × {n}" for reason, n in counts)
    total = sum(n for _, n in counts)
    where = f" --run {name(run_id)}" if run_id is not None else ""
    return (f"note: {plural(total, 'result')} recorded without deciding could not be measured ({reasons}); no "
            f"verdict rests on {'it' if total == 1 else 'them'} (`.gate()` makes a check decide): "
            f"niceeval query assertions{where} --state unavailable")


def changed_text(entry: str) -> str:
    """A `changed` entry as `run --dry` prints it: `sut:app/agent.py` → `sut-changed: app/agent.py`."""
    part, sep, path = entry.partition(":")
    return f"{part}-changed: {path}" if sep else entry
