"""What `niceeval run` prints: NDJSON events, one line per sealed attempt, and the summary."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict
from typing import IO, TYPE_CHECKING, Any

from rich.console import Console
from rich.text import Text

from .._states import AssertionState, AttemptState, GateState
from ._safe import visible

if TYPE_CHECKING:
    from .._records import AssertionResult, AttemptRecord
    from ..runner import PlannedSlot, RunOutcome, SetupFailure
    from ..store import Store

_NOT_OK = (AssertionState.ERRORED, AssertionState.MISMATCHED, AssertionState.BELOW, AssertionState.UNAVAILABLE)


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

    def _emit(self, event: str, run_id: str | None, **fields: Any) -> None:
        self.out.write(json.dumps({"event": event, "run_id": run_id, **fields}, ensure_ascii=False) + "\n")
        self.out.flush()

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


def attempt_word(state: str, gate: str | None) -> str:
    if state == AttemptState.SCORED and gate == GateState.FAILED:
        return "scored, gate failed"
    if state == AttemptState.SCORED and gate == GateState.UNAVAILABLE:
        return "scored, gate unavailable"
    return state


_STYLE = {
    "passed": "green", "scored": "green", "failed": "red", "errored": "red bold",
    "unrankable": "yellow", "scored, gate failed": "red", "scored, gate unavailable": "yellow",
}


def score_text(score: float | None, max_score: float | None, unavailable_weight: float | None,
               partial: float | None = None) -> str:
    def n(x: float | None) -> str:
        return "?" if x is None else f"{x:g}"

    if score is None:
        return f"partial {n(partial)} of {n(max_score)} · not rankable" if partial is not None else ""
    text = f"{n(score)} of {n(max_score)}"
    if unavailable_weight:
        text += f" · {n(unavailable_weight)} unavailable · not rankable"
    return text


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
        word = attempt_word(str(attempt.state), str(attempt.gate) if attempt.gate else None)
        extra = score_text(attempt.score, attempt.max_score, attempt.unavailable_weight, attempt.partial_score)
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


def print_summary(console: Console, store: Store, outcome: RunOutcome, *, limit: int = 20) -> None:
    """Failures first (with their failing and unavailable assertions), then totals and next steps."""
    if outcome.run_id is None:
        return
    print_setup_failures(console, outcome.setup_failures)
    attempts = store.attempts_for_run(outcome.run_id)
    bad = [a for a in attempts if attempt_word(str(a.state), str(a.gate) if a.gate else None)
           not in ("passed", "scored")]
    if bad:
        console.print()
    for attempt in bad[:limit]:
        word = attempt_word(str(attempt.state), str(attempt.gate) if attempt.gate else None)
        head = Text()
        head.append(f"{word.upper()}", style=_STYLE.get(word, ""))
        head.append(f"  {attempt.experiment_id} · {attempt.eval_id}#{attempt.ordinal}")
        extra = score_text(attempt.score, attempt.max_score, attempt.unavailable_weight, attempt.partial_score)
        if extra:
            head.append(f"  {extra}")
        if str(attempt.relation) == "reference":
            head.append(f"  (reused from run {attempt.run_id})", style="dim")
        console.print(head)
        if attempt.reason:
            detail = attempt.reason + (f": {attempt.error}" if attempt.error else "")
            console.print(Text("    " + visible(detail, 400, single_line=True)))
        for result in store.assertions_for_attempt(attempt.id):
            if result.state not in _NOT_OK:
                continue
            console.print(Text("    " + visible(_assertion_line(result), 300, single_line=True)))
    if len(bad) > limit:
        console.print(Text(f"… and {len(bad) - limit} more; see `niceeval view {outcome.run_id}`"))
    console.print()
    counts = ", ".join(f"{n} {state}" for state, n in sorted(outcome.counts.items()))
    console.print(Text(f"run {outcome.run_id}: {counts or 'no attempts'} · exit {outcome.exit_code}"))
    if outcome.reused:
        console.print(Text(
            f"{outcome.reused} result(s) reused from earlier runs (same fingerprint); "
            "`niceeval run --rerun` reruns what did not pass, `--rerun-all` everything."
        ))
    else:
        console.print(Text("0 results reused (nothing sealed earlier had the same fingerprint)."))
    if any(_has_key_problem(store, a.id) for a in bad[:limit]):
        console.print(Text(
            "judge items are unavailable (judge-key-unresolved): set the API key variable named by "
            "api_key_env (default OPENAI_API_KEY), e.g. in a .env file beside niceeval.toml."
        ))
    console.print(Text(f"details: niceeval view {outcome.run_id}"))


def _has_key_problem(store: Store, attempt_id: str) -> bool:
    return any(r.reason == "judge-key-unresolved" for r in store.assertions_for_attempt(attempt_id))


def _assertion_line(result: AssertionResult) -> str:
    name = result.label or result.key
    if result.group_name:
        name = f"{result.group_name} / {name}"
    parts = [f"{result.state}: {name}"]
    if result.measurement is not None:
        m = f"{result.measurement:.2f}"
        if result.threshold is not None:
            rel = "≥" if result.measurement >= result.threshold else "<"
            m += f" {rel} {result.threshold:.2f} required"
        parts.append(m)
    if result.weight is not None:
        c = "—" if result.contribution is None else f"{result.contribution:g}"
        parts.append(f"{c} / {result.weight:g}")
    if result.reason:
        parts.append(f"reason: {result.reason}")
    if result.explanation:
        parts.append(result.explanation)
    if result.source_file:
        parts.append(f"at {result.source_file}:{result.source_line}")
    return " · ".join(parts)


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
    outcome = run(request, events)
    if outcome.run_id is not None and (junit is not None or not json_out):
        with Store.open(request.store_path or request.project.store, readonly=True) as store:
            if junit is not None:
                from .junit import write_junit

                write_junit(store, outcome.run_id, junit)
            if not json_out:
                print_summary(console, store, outcome)
    return outcome


def run_dry(request: Any, console: Console, *, json_out: bool) -> int:
    """`run --dry`: print the plan (execute: why / reuse: which attempt); run nothing."""
    from ..runner import plan
    from ..store import Store

    with Store.open(request.store_path or request.project.store) as store:
        slots = plan(request, store)
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
