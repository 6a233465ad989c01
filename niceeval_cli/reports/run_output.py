"""What `niceeval run` prints: NDJSON events, one line per sealed attempt, and the summary."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict
from typing import IO, TYPE_CHECKING, Any

from rich.console import Console
from rich.text import Text

from .._states import UnavailableReason
from . import _out
from ._header import experiment_lines, multi_attempt_lines
from ._render import attempt_lines, blank, counts_text, exit_text, line, score_text
from ._safe import visible
from ._tally import attempt_word, tally

if TYPE_CHECKING:
    from .._records import AssertionResult, AttemptRecord
    from ..runner import PlannedSlot, RunOutcome, SetupFailure
    from ..store import Store

SUMMARY_LIMIT = 20  # failing attempts shown in full after a run; `niceeval view` shows the rest
# Everything but passed and cleanly scored: the attempt filters of the store, as `view --state` takes them.
_BAD_STATES = ("errored", "failed", "unrankable", "gate-failed", "gate-unavailable")


def _plain(record: Any) -> dict[str, Any]:
    return {k: (str(v) if hasattr(v, "value") else v) for k, v in asdict(record).items()}


def _slot_json(slot: PlannedSlot) -> dict[str, Any]:
    return {
        "experiment_id": slot.experiment.id,
        "eval_id": slot.eval.id,
        "ordinal": slot.ordinal,
        "decision": "execute" if slot.execute else "reuse",
        "plan_reason": str(slot.reason),
        "attempt_id": slot.reuse_attempt_id,
        "from_run_id": slot.reuse_run_id,
        "fingerprint": slot.fingerprint,
        "changed": list(slot.changed),
    }


class NdjsonEvents:
    """`--json`: one JSON object per line, each with "event" and "run_id"."""

    def __init__(self, out: IO[str]) -> None:
        self.out = out
        self.closed = False

    def _emit(self, event: str, run_id: str | None, **fields: Any) -> None:
        if self.closed:
            return
        try:
            self.out.write(json.dumps({"event": event, "run_id": run_id, **fields}, ensure_ascii=False) + "\n")
            self.out.flush()
        except BrokenPipeError:
            # The reader went away (`niceeval run --json | head`): the run goes on and seals
            # everything; only the events stop.
            self.closed = True
            silence_stdout()

    def planned(self, run_id: str | None, slots: Sequence[PlannedSlot]) -> None:
        self._emit("run.planned", run_id, slots=[_slot_json(s) for s in slots])

    def setup_failed(self, run_id: str | None, failures: Sequence[SetupFailure]) -> None:
        self._emit("run.setup_failed", run_id, failures=[asdict(f) for f in failures])

    def started(self, run_id: str, slot: PlannedSlot) -> None:
        self._emit("attempt.started", run_id, experiment_id=slot.experiment.id, eval_id=slot.eval.id,
                   ordinal=slot.ordinal)

    def sealed(self, run_id: str, slot: PlannedSlot, attempt: AttemptRecord,
               results: Sequence[AssertionResult]) -> None:
        self._emit("attempt.sealed", run_id, attempt=_plain(attempt), assertions=[_plain(r) for r in results])

    def finished(self, outcome: RunOutcome) -> None:
        self._emit("run.finished", outcome.run_id, status=outcome.status, exit_code=outcome.exit_code,
                   executed=outcome.executed, reused=outcome.reused, counts=outcome.counts)


class LineEvents:
    """Not a TTY (CI): one plain line per sealed attempt."""

    def __init__(self, console: Console) -> None:
        self.console = console

    def planned(self, run_id: str | None, slots: Sequence[PlannedSlot]) -> None:
        executing = sum(s.execute for s in slots)
        self.console.print(
            Text(f"niceeval: {len(slots)} slot(s): {executing} to execute, {len(slots) - executing} reused")
        )

    def setup_failed(self, run_id: str | None, failures: Sequence[SetupFailure]) -> None:
        pass  # the summary names them

    def started(self, run_id: str, slot: PlannedSlot) -> None:
        pass

    def sealed(self, run_id: str, slot: PlannedSlot, attempt: AttemptRecord,
               results: Sequence[AssertionResult]) -> None:
        word = attempt_word(attempt.state, attempt.gate)
        extra = score_text(attempt)
        reason = f" ({attempt.reason})" if attempt.reason else ""
        line = f"{word:<10} {slot.experiment.id} · {slot.eval.id}#{slot.ordinal}{reason}"
        if extra:
            line += f"  {extra}"
        # Plain write, not rich: one line per attempt must stay cheap on a 10 000-attempt run.
        self.console.file.write(visible(line, 300, single_line=True) + "\n")

    def finished(self, outcome: RunOutcome) -> None:
        pass


def print_setup_failures(console: Console, failures: Sequence[SetupFailure]) -> None:
    for f in failures:
        console.print(Text(
            f"setup error: judge preflight failed for experiment {f.experiment_id!r} "
            f"(evals: {', '.join(f.eval_ids)}) at {f.endpoint} model {f.model!r}: {visible(f.cause, 300)}. "
            "These attempts were not dispatched.",
            style="red",
        ))


def print_summary(
    console: Console,
    store: Store,
    outcome: RunOutcome,
    *,
    limit: int = SUMMARY_LIMIT,
) -> None:
    """Failures first (the same renderer as `view`), then totals, the run id and next steps."""
    if outcome.run_id is None:
        return
    print_setup_failures(console, outcome.setup_failures)
    run = store.resolve_run(outcome.run_id)
    groups = store.outcome_rows(run.id)
    totals = tally(groups, run.experiments)
    bad_count = sum(n for word, n in totals.words.items() if word not in ("passed", "scored"))
    bad = store.attempts_for_run(run.id, states=list(_BAD_STATES), limit=limit)
    key_problem = False
    for attempt in bad:
        results = store.assertions_for_attempt(attempt.id)
        key_problem = key_problem or any(r.reason == UnavailableReason.JUDGE_KEY_UNRESOLVED for r in results)
        _out.emit(console, [blank(), *attempt_lines(attempt, results, rest_limit=0, note_hidden=False)])
    if bad_count > len(bad):
        _out.emit(console, [line((f"… and {bad_count - len(bad)} more; see `niceeval view {run.id}`", "dim"))])
    lines = []
    for experiment in totals.experiments:
        lines += [blank(), *experiment_lines(experiment)]
    multi = multi_attempt_lines(totals)
    if multi:
        lines += [blank(), *multi]
    lines.append(blank())
    lines.append(line(("run ", "bold"), (run.id, "bold"),
                      f": {counts_text(totals.words)} · {exit_text(outcome.exit_code)}"))
    if outcome.reused:  # config.md: run output always says how many results were reused and how to rerun
        lines.append(line(
            f"{outcome.reused} result(s) reused from earlier runs (same fingerprint); "
            "`niceeval run --rerun` reruns what did not pass, `--rerun-all` everything."
        ))
    else:
        lines.append(line("0 results reused (nothing sealed earlier had the same fingerprint)."))
    if key_problem:
        lines.append(line(
            "judge items are unavailable (judge-key-unresolved): set the API key variable named by "
            "api_key_env (default OPENAI_API_KEY), e.g. in a .env file beside niceeval.toml."
        ))
    lines.append(line(("details: ", "dim"), f"niceeval view {run.id}"))
    _out.emit(console, lines)


def _events_for(console: Console, json_out: bool) -> Any:
    import sys

    if json_out:
        return NdjsonEvents(sys.stdout)
    if console.is_terminal:
        try:
            from .progress import LiveProgress
        except ImportError:  # pragma: no cover - until the live display exists
            return LineEvents(console)
        return LiveProgress(console)
    return LineEvents(console)


def run_with_output(request: Any, console: Console, *, json_out: bool, junit: Any = None) -> RunOutcome:
    """Run, showing progress, then the summary (human) or `run.finished` (NDJSON)."""
    from ..runner import run
    from ..store import Store

    events = _events_for(console, json_out)
    try:
        outcome = run(request, events)
    finally:
        close = getattr(events, "close", None)
        if close is not None:
            close()  # a live display must give the terminal back even when the run raised
    if outcome.run_id is not None and (junit is not None or not json_out):
        with Store.open(request.store_path or request.project.store, readonly=True) as store:
            if not json_out:
                print_summary(console, store, outcome)
            if junit is not None:
                from .junit import write_junit

                try:
                    write_junit(store, outcome.run_id, junit)
                except OSError as error:
                    from ..cli import UserError

                    raise UserError(
                        f"--junit {junit}: could not write the JUnit XML ({error.strerror or error}); "
                        f"the results are sealed in run {outcome.run_id}"
                    ) from error
    return outcome


def run_dry(request: Any, console: Console, *, json_out: bool) -> int:
    """`run --dry`: print the plan (execute: why / reuse: which attempt); run nothing."""
    from ..runner import plan
    from ..runner._shard import layout_of
    from ..store import Store

    path = request.store_path or request.project.store
    if path.exists():
        with Store.open(path, readonly=True) as store:
            slots = plan(request, store)
    else:  # nothing sealed yet: every slot is new, and --dry creates no store
        slots = plan(request, None)
    slots = list(layout_of(slots, request.shard, request.group_id).slots)  # --shard: this shard's part
    if json_out:
        import sys

        NdjsonEvents(sys.stdout).planned(None, slots)
        return 0
    for slot in slots:
        if slot.execute:
            why = str(slot.reason)
            if slot.changed:
                why += f" ({', '.join(slot.changed)})"
            line = f"execute  {slot.label}  {why}"
        else:
            line = f"reuse    {slot.label}  attempt {slot.reuse_attempt_id} from run {slot.reuse_run_id}"
        console.print(Text(visible(line, 400, single_line=True)))
    executing = sum(s.execute for s in slots)
    console.print(Text(f"{len(slots)} slot(s): {executing} to execute, {len(slots) - executing} to reuse; "
                       "nothing was run (--dry)"))
    return 0


def silence_stdout() -> None:
    """Point stdout at /dev/null after a broken pipe, so later writes and the final flush at exit
    do not raise again (the Python docs' recipe for SIGPIPE)."""
    import os
    import sys

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
