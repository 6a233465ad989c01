"""Sealed runs built straight into a real store (no runner), and plain-text rendering helpers.

The records come from tests/support/records.py (the one set of record builders), with fixed
values here.

Timestamps and durations are fixed so rendered text is stable; ids are real ULIDs and are
normalised by `normalise()` before snapshots are compared.
"""

from __future__ import annotations

import io
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from rich.console import Console

from niceeval_cli._ids import new_id
from niceeval_cli._records import AssertionResult, AttemptRecord
from niceeval_cli._states import (
    AssertionState,
    AttemptState,
    EvalKind,
    GateState,
    PlanReason,
    Relation,
    Role,
    RunStatus,
)
from niceeval_cli.store import SlotRecord, Store
from tests.support.records import make_attempt, make_result, origin_slot

ID = re.compile(r"\b[0-9A-HJKMNP-TV-Z]{26}\b")


def normalise(text: str) -> str:
    """Replace every ULID with <ID1>, <ID2>, ... in order of first appearance."""
    seen: dict[str, str] = {}

    def sub(match: re.Match[str]) -> str:
        return seen.setdefault(match.group(0), f"<ID{len(seen) + 1}>")

    return ID.sub(sub, text)


def plain_console(width: int = 100) -> tuple[Console, io.StringIO]:
    """What a pipe or CI log gets: not a terminal, so no colour, no boxes, no wrapping."""
    buffer = io.StringIO()
    return Console(file=buffer, width=width, force_terminal=False, no_color=True), buffer


def tty_console(width: int = 100, *, no_color: bool = False) -> tuple[Console, io.StringIO]:
    buffer = io.StringIO()
    console = Console(file=buffer, width=width, force_terminal=True, color_system="truecolor",
                      no_color=no_color)
    return console, buffer


@dataclass
class Runs:
    """Seal attempts and results into runs through the public Store API."""

    path: Path
    store: Store
    sealed: dict[str, list[AttemptRecord]] = field(default_factory=dict)

    def begin(self, experiments: Sequence[str] = ("exp",), *, started: str = "2025-03-01T10:00:00.000Z") -> str:
        run_id = new_id()
        self.store.begin_run(run_id, started_at=started, argv=["run"], version="0.1.0", config_file=None,
                             experiments=list(experiments))
        return run_id

    def finish(self, run_id: str, exit_code: int = 1, *, ended: str = "2025-03-01T10:00:02.500Z",
               status: RunStatus = RunStatus.FINISHED) -> None:
        self.store.finish_run(run_id, status=status, ended_at=ended, exit_code=exit_code)

    def attempt(self, run_id: str, eval_id: str, state: AttemptState | str = AttemptState.PASSED, *,
                experiment: str = "exp", ordinal: int = 0, **changes: Any) -> AttemptRecord:
        """`records.make_attempt` with this module's fixed times, tokens and fingerprint."""
        state = AttemptState(state)
        kind = EvalKind.SCORE if state in (AttemptState.SCORED, AttemptState.UNRANKABLE) else EvalKind.PASS
        kind = changes.pop("kind", kind)
        fixed: dict[str, Any] = {
            "ordinal": ordinal, "kind": kind, "gate": GateState.NONE if kind == EvalKind.SCORE else None,
            "fingerprint": "f" * 64, "fingerprint_parts": "{}", "started_at": "2025-03-01T10:00:01.000Z",
            "ended_at": "2025-03-01T10:00:01.250Z", "duration_ms": 250.0, "input_tokens": 120, "output_tokens": 30,
        }
        return make_attempt(run_id, experiment, eval_id, state=state, **{**fixed, **changes})

    def seal(self, attempt: AttemptRecord, *results: AssertionResult) -> AttemptRecord:
        self.store.seal_attempt(attempt, list(results), origin_slot(attempt))
        self.sealed.setdefault(attempt.run_id, []).append(attempt)
        return attempt

    def reuse(self, run_id: str, attempt: AttemptRecord) -> None:
        self.store.add_reference_slots([SlotRecord(
            run_id, attempt.experiment_id, attempt.eval_id, attempt.ordinal, attempt.id, Relation.REFERENCE,
            PlanReason.REUSED,
        )])


def result(attempt: AttemptRecord, ordinal: int, state: AssertionState | str = AssertionState.MATCHED,
           label: str | None = None, **changes: Any) -> AssertionResult:
    """A Boolean `record` assertion unless told otherwise (role, weight, measurement, ...):
    `records.make_result` with this module's fixed texts."""
    state = AssertionState(state)
    explanation = {
        AssertionState.MATCHED: "expected includes('ok'), got 'ok'",
        AssertionState.MISMATCHED: "expected includes('30 days'), got 'We ship in 3 days.'",
    }.get(state)
    fixed: dict[str, Any] = {
        "key": label or f"k{ordinal}", "label": label, "role": Role.RECORD, "explanation": explanation,
        "match_name": "includes", "match_config": '{"value":"30 days"}', "evidence": '"We ship in 3 days."',
        "source_file": "evals/support.py", "source_line": 10 + ordinal,
    }
    return make_result(attempt, ordinal, state, **{**fixed, **changes})


def judge_result(attempt: AttemptRecord, ordinal: int, state: AssertionState | str, label: str,
                 **changes: Any) -> AssertionResult:
    """A closed_qa judge assertion with its audit, as the runner seals one."""
    base = result(
        attempt, ordinal, state, label, match_name="closed_qa", match_kind="score",
        match_config='{"choices":{"N":0.0,"Y":1.0},"question":"Is the refund window clear?","scale_version":"1"}',
        evidence='{"input":"How long is the refund window?","output":"We ship in 3 days."}',
        judge_audit='{"request":{"model":"judge-1","messages":[{"role":"system","content":"You grade.\\n'
                    'Be fair."},{"role":"user","content":"Criterion: clear?"}]},"response":{"choice":"N"}}',
        judge_tokens=140, explanation=None,
    )
    return replace(base, **changes)


def render(path: Path, ref: str | None = None, *, width: int = 100, **options: Any) -> str:
    """`niceeval view` as a pipe sees it, ids normalised."""
    console, buffer = plain_console(width)
    show_view(path, ref, console=console, **options)
    return normalise(buffer.getvalue())


def show_view(
    path: Path, ref: str | None, *, console: Any, experiments: Any = (), eval_prefixes: Any = (),
    states: Any = (), expand: bool = False, limit: int | None = 100,
) -> None:
    """`niceeval view` through its two layers: app.view reads, reports.view prints."""
    from niceeval_cli.app.view import ViewFilters, load_view
    from niceeval_cli.reports.view import print_view

    filters = ViewFilters(tuple(experiments), tuple(eval_prefixes), tuple(states))
    print_view(console, load_view(path, ref, filters, expand=expand, limit=limit))
