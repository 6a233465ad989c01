"""What `niceeval regrade` reads of a sealed run (judge-trust.md §2): each slot's attempt with its
results, its transcript and the stored judge inputs of its judge results.

Read in batches (`BATCH` attempts, five statements each: attempts, results, judge inputs, turns
and events) so a run of 100 000 attempts is never held at once, and the regrade's event loop,
which reads the next batch while the judge answers, is held for a few statements, not for two
per attempt. Which results are judge results is the store's own word (`match_name`), so a store
sealed before judge inputs existed names the attempts it cannot regrade.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from .._judge_scale import JUDGE_CHOICES
from .._records import EventRecord, TurnRecord
from .db import Db
from .reads import run_slots
from .rows import AssertionRow, AttemptRow, SlotRow, assertion_row, attempt_row, event_row, turn_row

__all__ = ["BATCH", "JUDGE_MATCHES", "RegradeSource", "is_judge_result", "regrade_sources"]

#: Attempts read per batch.
BATCH = 256
#: The stored `match_name` of a judge result (a thresholded judge keeps its factory's name).
JUDGE_MATCHES = frozenset(JUDGE_CHOICES)


def is_judge_result(result: AssertionRow) -> bool:
    return result.match_name in JUDGE_MATCHES


@dataclass(frozen=True)
class RegradeSource:
    """One slot of the original run, its attempt, results (registration order) and transcript,
    and the stored content of its judge results' inputs (sha256 → canonical JSON)."""

    slot: SlotRow
    attempt: AttemptRow
    results: tuple[AssertionRow, ...]
    turns: tuple[TurnRecord, ...]
    inputs: Mapping[str, str]

    @property
    def judged(self) -> bool:
        return any(is_judge_result(r) for r in self.results)

    @property
    def missing_inputs(self) -> bool:
        """A judge result whose full input was never stored (sealed before schema 9)."""
        return any(is_judge_result(r) and (r.judge_input is None or r.judge_input not in self.inputs)
                   for r in self.results)


def regrade_slots(db: Db, run_id: str) -> list[SlotRow]:
    """The slots of a run (or a group) that an attempt fills."""
    return [s for s in run_slots(db, run_id) if s.attempt_id is not None]


def regrade_sources(db: Db, slots: Sequence[SlotRow], *, transcripts: bool = True) -> Iterator[RegradeSource]:
    """`slots`' attempts with what regrading them needs, `BATCH` at a time, in the slots' order."""
    for start in range(0, len(slots), BATCH):
        batch = slots[start:start + BATCH]
        ids = json.dumps([s.attempt_id for s in batch])
        attempts = {row["id"]: attempt_row(row) for row in db.rows(
            "Reading the attempts to regrade",
            "SELECT * FROM attempts WHERE id IN (SELECT value FROM json_each(?))", [ids])}
        results: dict[str, list[AssertionRow]] = {}
        for row in db.rows("Reading the results to regrade",
                           "SELECT * FROM assertion_results WHERE attempt_id IN (SELECT value FROM json_each(?)) "
                           "ORDER BY attempt_id, ordinal", [ids]):
            results.setdefault(row["attempt_id"], []).append(assertion_row(row))
        shas = sorted({r.judge_input for rs in results.values() for r in rs if r.judge_input is not None})
        inputs = {row["sha256"]: row["content"] for row in db.rows(
            "Reading the judge inputs to regrade",
            "SELECT sha256, content FROM judge_inputs WHERE sha256 IN (SELECT value FROM json_each(?))",
            [json.dumps(shas)])} if shas else {}
        judged = json.dumps([a for a, rs in results.items() if any(map(is_judge_result, rs))])
        transcript = _transcripts(db, judged) if transcripts else {}
        for slot in batch:
            attempt = attempts[str(slot.attempt_id)]
            own = tuple(results.get(attempt.id, ()))
            mine = {r.judge_input: inputs[r.judge_input] for r in own
                    if r.judge_input is not None and r.judge_input in inputs}
            yield RegradeSource(slot, attempt, own, tuple(transcript.get(attempt.id, ())), mine)


def _transcripts(db: Db, ids: str) -> dict[str, list[TurnRecord]]:
    """The turns (each with its events) of the attempts in the JSON list `ids`: two statements."""
    events: dict[tuple[str, int], list[EventRecord]] = {}
    for row in db.rows("Reading the events to regrade",
                       "SELECT * FROM events WHERE attempt_id IN (SELECT value FROM json_each(?)) "
                       "ORDER BY attempt_id, turn_ordinal, seq", [ids]):
        events.setdefault((row["attempt_id"], row["turn_ordinal"]), []).append(event_row(row))
    found: dict[str, list[TurnRecord]] = {}
    for row in db.rows("Reading the turns to regrade",
                       "SELECT * FROM turns WHERE attempt_id IN (SELECT value FROM json_each(?)) "
                       "ORDER BY attempt_id, ordinal", [ids]):
        found.setdefault(row["attempt_id"], []).append(
            turn_row(row, tuple(events.get((row["attempt_id"], row["ordinal"]), ()))))
    return found


__all__ += ["regrade_slots"]
