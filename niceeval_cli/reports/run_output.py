"""What `niceeval run` prints: the events during the run (NDJSON, plain lines; the live display
is `progress`), the plan of `--dry`, and the summary of a `RunReport` (app.run)."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict
from typing import IO, TYPE_CHECKING, Any

from rich.console import Console

from .._states import EvalKind, PlanReason
from ..outcomes import IntervalRule
from ._safe import visible
from ._tally import attempt_word, tally
from .data import RunReport
from .json_columns import decoded
from .terminal import emit as out
from .terminal.attempt import block_lines
from .terminal.cost import cost_lines
from .terminal.lines import Line, blank, line
from .terminal.run import experiment_lines, multi_attempt_lines
from .viewmodels.attempt import attempt_block, score_text
from .viewmodels.cost import experiment_costs, usd
from .viewmodels.run import (
    changed_text,
    config_only_note,
    count_line,
    experiment_summary,
    multi_attempt,
    not_run_text,
    reuse_text,
    unavailable_records_note,
)
from .viewmodels.text import exit_text, plural

if TYPE_CHECKING:
    from .._records import AssertionResult, AttemptRecord
    from ..runner import PlannedSlot, RunEvents, RunOutcome, SetupFailure


def _plain(record: Any) -> dict[str, Any]:
    return decoded({k: (str(v) if hasattr(v, "value") else v) for k, v in asdict(record).items()})


def _slot_json(slot: PlannedSlot) -> dict[str, Any]:
    return {
        "experiment_id": slot.experiment.id,
        "eval_id": slot.eval.id,
        "case_id": slot.eval.case.id if slot.eval.case is not None else None,
        "ordinal": slot.ordinal,
        "decision": "execute" if slot.execute else "reuse",
        "plan_reason": str(slot.reason),
        "attempt_id": slot.reuse_attempt_id,
        "from_run_id": slot.reuse_run_id,
        "fingerprint": slot.fingerprint,
        "changed": list(slot.changed),
    }


class NdjsonEvents:
    """`--json`: one JSON object per line, each with "event" and "run_id"; JSON-text columns as values."""

    def __init__(self, out: IO[str]) -> None:
        # On a terminal, control characters in eval ids, messages and errors are made visible
        # (as every reader's JSON is, `formats.for_terminal`); to a pipe the lines are unchanged.
        from .formats import terminal_stream  # only `--json` needs it: not on every run's start-up

        self.out = terminal_stream(out, _isatty(out))

    def _emit(self, event: str, run_id: str | None, **fields: Any) -> None:
        # A reader that went away (`niceeval run --json | head`) raises BrokenPipeError here: the
        # run's relay drops this listener and the run goes on (`runner.EventRelay`).
        self.out.write(json.dumps({"event": event, "run_id": run_id, **fields}, ensure_ascii=False) + "\n")
        self.out.flush()

    def planned(self, run_id: str | None, slots: Sequence[PlannedSlot]) -> None:
        # The note a summary prints, as data: a script reading `--json` decides what it may trust.
        # (A regrade's slots have no shape: it runs no system under test.)
        config_only = dict.fromkeys(s.experiment.id for s in slots
                                    if not s.execute and getattr(getattr(s, "shape", None), "config_only", False))
        self._emit("run.planned", run_id, slots=[_slot_json(s) for s in slots], config_only_reused=list(config_only))

    def setup_failed(self, run_id: str | None, failures: Sequence[SetupFailure]) -> None:
        self._emit("run.setup_failed", run_id, failures=[asdict(f) for f in failures])

    def started(self, run_id: str, slot: PlannedSlot) -> None:
        self._emit("attempt.started", run_id, experiment_id=slot.experiment.id, eval_id=slot.eval.id,
                   ordinal=slot.ordinal)

    def sealed(self, run_id: str, slot: PlannedSlot, attempt: AttemptRecord,
               results: Sequence[AssertionResult]) -> None:
        self._emit("attempt.sealed", run_id, attempt=_plain(attempt), assertions=[_plain(r) for r in results])

    def finished(self, outcome: RunOutcome) -> None:
        budget = ({"budget_usd": outcome.budget_usd, "spent_usd": outcome.spent_usd,
                   "unstarted": list(outcome.unstarted), "uncounted": outcome.uncounted}
                  if outcome.budget_usd is not None else {})
        self._emit("run.finished", outcome.run_id, status=outcome.status, exit_code=outcome.exit_code,
                   executed=outcome.executed, reused=outcome.reused, counts=outcome.counts,
                   unavailable_records=dict(outcome.unavailable_records),
                   config_only_reused=list(outcome.plan.config_only_reused) if outcome.plan is not None else [],
                   **budget)


class LineEvents:
    """Not a TTY (CI): one plain line per sealed attempt, flushed at most every
    `FLUSH_EVERY_S` (a flush per line was a fifth of a 20 000-attempt run into a pipe) and at
    the end of the run."""

    FLUSH_EVERY_S = 0.1

    def __init__(self, console: Console) -> None:
        self.console = console
        self._flushed_at = time.monotonic()

    def planned(self, run_id: str | None, slots: Sequence[PlannedSlot]) -> None:
        executing = [s for s in slots if s.execute]  # one pass over a re-run's 20 000 reused slots
        regrading = any(s.reason is PlanReason.REGRADE for s in executing)
        self.console.file.write(f"niceeval: {len(slots)} slot(s): {len(executing)} to "
                                f"{'regrade' if regrading else 'execute'}, {len(slots) - len(executing)} "
                                f"{'adopted' if regrading else 'reused'}\n")

    def setup_failed(self, run_id: str | None, failures: Sequence[SetupFailure]) -> None:
        pass  # the summary names them

    def started(self, run_id: str, slot: PlannedSlot) -> None:
        pass

    def sealed(self, run_id: str, slot: PlannedSlot, attempt: AttemptRecord,
               results: Sequence[AssertionResult]) -> None:
        word = attempt_word(attempt.state, attempt.gate)
        extra = score_text(attempt)
        reason = f" ({attempt.reason})" if attempt.reason else ""
        text = f"{word:<10} {slot.experiment.id} · {slot.eval.id}#{slot.ordinal}{reason}"
        if extra:
            text += f"  {extra}"
        # Plain write, not rich: one line per attempt must stay cheap on a 10 000-attempt run.
        self.console.file.write(visible(text, 300, single_line=True) + "\n")
        now = time.monotonic()
        if now - self._flushed_at >= self.FLUSH_EVERY_S:
            self._flushed_at = now
            self.console.file.flush()  # a reader that went away is noticed here (app.run keeps running)

    def finished(self, outcome: RunOutcome) -> None:
        self.console.file.flush()


def events_for(console: Console, json_out: bool, stream: IO[str] | None = None) -> RunEvents:
    """`stream`: where NDJSON goes (default stdout; `run --json` hands the real one, `_stdout.json_only`)."""
    if json_out:
        return NdjsonEvents(stream or sys.stdout)
    if console.is_terminal:
        from .progress import LiveProgress

        return LiveProgress(console)
    return LineEvents(console)


_events_for = events_for  # the name tests/reports/test_progress.py imports


def setup_failure_lines(failures: Sequence[SetupFailure]) -> list[Line]:
    return [line((
        f"setup error: {f.check} preflight failed for experiment {f.experiment_id!r} "
        f"(evals: {', '.join(f.eval_ids)}) at {f.endpoint}{f' model {f.model!r}' if f.model else ''}: "
        f"{visible(f.cause, 300)}. "
        "These attempts were not dispatched.", "red")) for f in failures]


def summary_lines(report: RunReport) -> list[Line]:
    """Failures first (the same renderer as `view`), then per experiment, the evals with several
    attempts, the count line that explains the exit code, the reuse line and the next step."""
    sealed = report.sealed
    if sealed is None:
        return []
    outcome = report.outcome
    lines = setup_failure_lines(outcome.setup_failures)
    totals = tally(sealed.groups, sealed.run.experiments, sealed.passed_evals, missing=outcome.missing)
    counts = count_line(totals, outcome.exit_code)
    for attempt, results in sealed.shown:
        lines += [blank(), *block_lines(attempt_block(attempt, results, rest_limit=0), note_hidden=False)]
    if sealed.more:
        lines.append(line((f"… and {sealed.more} more; see `niceeval view {sealed.run.id}`", "dim")))
    for experiment in totals.experiments:
        lines += [blank(), *experiment_lines(experiment_summary(experiment, report.confidence))]
    multi = multi_attempt(totals, confidence=report.confidence)
    if multi is not None:
        lines += [blank(), *multi_attempt_lines(multi)]
    costs = cost_lines(experiment_costs(sealed.costs, sealed.run.experiments))
    if costs:
        lines += [blank(), *costs]
    lines.append(blank())
    lines.append(line(("run ", "bold"), (sealed.run.id, "bold"),
                      f": {counts.text} · {exit_text(outcome.exit_code, counts.because)}"))
    not_run = not_run_text(report.not_run, totals.attempts)
    if not_run:
        lines.append(line((not_run + " (the run stopped before they started)", "yellow")))
    if report.plan is not None:
        lines.append(line(reuse_text(report.plan.reused, report.plan.reasons, report.plan.mode)))
        note = config_only_note(report.plan.config_only_reused)
        if note is not None:
            lines.append(line((note, "yellow")))
    if sealed.kept_sandboxes:
        for label, where in sealed.kept_sandboxes:
            lines.append(line(f"kept sandbox of {visible(label, 200, single_line=True)}: {where}"))
        lines.append(line(("`niceeval sandbox list` shows the kept sandboxes; `niceeval sandbox prune` removes them",
                           "dim")))
    if outcome.budget_usd is not None and outcome.status == "budget-exhausted":
        unstarted = [visible(u, 200, single_line=True) for u in outcome.unstarted]
        shown = ", ".join(unstarted[:10]) + (f" (+{len(unstarted) - 10} more)" if len(unstarted) > 10 else "")
        lines.append(line((f"budget exhausted: {usd(outcome.spent_usd or 0.0)} spent of {usd(outcome.budget_usd)}; ",
                           "yellow"), f"{len(unstarted)} slot(s) not started: {shown or 'none'}"))
    if outcome.budget_usd is not None and outcome.uncounted:
        lines.append(line((f"budget: {plural(outcome.uncounted, 'attempt')} reported no cost and had no estimate "
                           "(no [prices] for their model): --budget could not count what they spent", "yellow")))
    if sealed.unobserved:
        lines.append(line(
            "tool assertions are unavailable (tool-calls-unobserved): the adapter does not report tool calls "
            'completely; declare define_adapter(..., observes=("messages", "tool_calls")) when its turns '
            "carry every call (docs/agents.md)."
        ))
    if outcome.usage_unreported:
        lines.append(line((
            f"warning: {plural(outcome.usage_unreported, 'token count')} outside the range a store can hold "
            "(adapter or judge usage) treated as unreported (usage-unreported); see the attempts' notes", "yellow")))
    if outcome.replaced_code_points:
        lines.append(line((
            f"warning: {plural(outcome.replaced_code_points, 'code point')} that cannot be stored as UTF-8 "
            "(lone surrogates) replaced with U+FFFD; see the attempts' notes", "yellow")))
    unmeasured = unavailable_records_note(outcome.unavailable_records)
    if unmeasured is not None:
        lines.append(line((unmeasured, "yellow")))
    if sealed.key_problem:
        lines.append(line(
            "judge items are unavailable (judge-key-unresolved): set the API key variable named by "
            "api_key_env (default OPENAI_API_KEY), e.g. in a .env file beside niceeval.toml."
        ))
    lines.append(line(("details: ", "dim"), f"niceeval view {sealed.run.id}"))
    return lines


def print_summary(console: Console, report: RunReport) -> None:
    """The summary (a reader that went away: the run's relay drops this listener, `Summary`)."""
    out.emit(console, summary_lines(report))


class Summary:
    """A listener of the run's relay that hears only `reported`: the summary, once the app has
    read the run back."""

    def __init__(self, console: Console) -> None:
        self.console = console

    def reported(self, report: RunReport) -> None:
        print_summary(self.console, report)


def print_plan(console: Console, slots: Sequence[PlannedSlot], *, json_out: bool,
               stream: IO[str] | None = None, max_attempts: int | None = None) -> None:
    """`run --dry`: execute (why) / reuse (which attempt), one line per slot. `max_attempts`
    (`--until-decided`'s cap): the plan is only its start, so the line says how far it may grow."""
    if json_out:
        NdjsonEvents(stream or sys.stdout).planned(None, slots)
        return
    lines = []
    for slot in slots:
        if slot.execute:
            why = str(slot.reason)
            if slot.reason is PlanReason.KEEP_SANDBOX:
                why += " (its earlier attempt would be reused, and a reused attempt has no sandbox to keep)"
            if slot.changed:
                why += f" ({', '.join(changed_text(entry) for entry in slot.changed)})"
            text = f"execute  {slot.label}  {why}"
        else:
            text = f"reuse    {slot.label}  attempt {slot.reuse_attempt_id} from run {slot.reuse_run_id}"
        lines.append(line(visible(text, 400, single_line=True)))
    executing = sum(s.execute for s in slots)
    lines.append(line(f"{len(slots)} slot(s): {executing} to execute, {len(slots) - executing} to reuse; "
                      "nothing was run (--dry)"))
    if max_attempts is not None:
        lines.append(line(until_decided_text(slots, max_attempts)))
    # The note the run would print when it reuses them: the plan is where a reader decides.
    seen_by_config = dict.fromkeys(s.experiment.id for s in slots if not s.execute and s.shape.config_only)
    note = config_only_note(list(seen_by_config))
    if note is not None:
        lines.append(line(note))
    out.emit(console, lines)  # one write when piped: a dataset's plan is 10 000 lines


def _isatty(out: IO[str]) -> bool:
    try:
        return out.isatty()
    except (AttributeError, ValueError):  # a stand-in without it, or a closed stream
        return False


def until_decided_text(slots: Sequence[PlannedSlot], max_attempts: int) -> str:
    """How much `--until-decided` may add to this plan: one attempt at a time to each pass-style
    eval whose pass_rule is a rate, until it has `max_attempts`."""
    planned: dict[tuple[str, str], int] = {}
    for slot in slots:
        if slot.eval.kind == EvalKind.PASS.value and isinstance(slot.settings.pass_rule, IntervalRule):
            key = (slot.experiment.id, slot.eval.id)
            planned[key] = planned.get(key, 0) + 1
    room = sum(max(0, max_attempts - n) for n in planned.values())
    return (f"--until-decided may add up to {room} slot(s): to the {plural(len(planned), 'eval')} with a "
            f"numeric pass_rule, one at a time while undecided, up to {max_attempts} attempts each")
