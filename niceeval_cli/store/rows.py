"""Typed rows: what the store writes (SlotRecord) and what its readers get back.

Readers (`view`, the run summary, JUnit) get frozen dataclasses with enum-typed states, never
raw dicts; only `Store.query` returns dicts, because it feeds output formats.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from operator import attrgetter
from typing import Any, NamedTuple

from .._records import AssertionResult, AttemptRecord, EventRecord, TurnRecord
from .._states import AssertionState, AttemptState, EvalKind, GateState, PlanReason, Relation, Role, RunStatus
from .schema import ASSERTION_COLUMNS, ATTEMPT_COLUMNS, EVENT_COLUMNS, SLOT_COLUMNS, TURN_COLUMNS


class SlotRecord(NamedTuple):
    """One planned slot of a run and the attempt that fills it (sealed here, or reused).

    A tuple in `run_slots`' column order: a re-run that reuses 20 000 results hands SQLite its
    reference slots as they are (a frozen dataclass costs a Python call a slot to make and unpack)."""

    run_id: str
    experiment_id: str
    eval_id: str
    ordinal: int
    attempt_id: str | None
    relation: Relation
    plan_reason: PlanReason
    pass_rule: str | None = None


SlotRow = SlotRecord  # read back exactly as written


class PlanSlot(NamedTuple):
    """One slot of a run's full plan (table `run_plan`, ids only): what readers name as "not run"."""

    experiment_id: str
    eval_id: str
    ordinal: int
    case_id: str | None = None


@dataclass(frozen=True)
class RunRow:
    id: str
    started_at: str
    ended_at: str | None
    status: RunStatus
    argv: tuple[str, ...]
    niceeval_version: str | None
    exit_code: int | None
    config_file: str | None
    experiments: tuple[str, ...]
    # Schema 3 (None for runs recorded before it).
    owner_pid: int | None = None
    owner_host: str | None = None
    owner_started_at: str | None = None
    planned_total: int | None = None
    shard_index: int | None = None
    shard_count: int | None = None
    group_id: str | None = None
    plan_digest: str | None = None
    executor: str | None = None
    budget_usd: float | None = None
    not_run: int | None = None  # planned slots no attempt filled; None when no plan was recorded
    # A shard group read as one run (scale.md): kind "group", its id the group id.
    kind: str = "run"
    shards_merged: int | None = None  # distinct shards present (groups only)
    member_run_ids: tuple[str, ...] = ()  # the shard runs that make the group (groups only)
    group_status: str | None = None  # "complete" / "incomplete" (groups only)

    @property
    def is_group(self) -> bool:
        return self.kind == "group"


@dataclass(frozen=True)
class AttemptRow(AttemptRecord):
    """A sealed attempt as read under one run: `relation` says whether that run made it or reused it."""

    relation: Relation = Relation.ORIGIN
    plan_reason: PlanReason | None = None

    @property
    def origin_run_id(self) -> str:
        """The run that executed and sealed this attempt (differs from the run read for references)."""
        return self.run_id


@dataclass(frozen=True)
class AssertionRow(AssertionResult):
    """A sealed AssertionResult read back from the store."""


attempt_values = attrgetter(*ATTEMPT_COLUMNS)
assertion_values = attrgetter(*ASSERTION_COLUMNS)
slot_values = attrgetter(*SLOT_COLUMNS)
turn_values = attrgetter(*TURN_COLUMNS)
event_values = attrgetter(*EVENT_COLUMNS)


def run_row(row: Mapping[str, Any]) -> RunRow:
    return RunRow(
        id=row["id"],
        started_at=row["started_at"],
        ended_at=row["ended_at"],
        status=RunStatus(row["status"]),
        argv=tuple(json.loads(row["argv"] or "[]")),
        niceeval_version=row["niceeval_version"],
        exit_code=row["exit_code"],
        config_file=row["config_file"],
        experiments=tuple(json.loads(row["experiments"] or "[]")),
        owner_pid=row.get("owner_pid"),
        owner_host=row.get("owner_host"),
        owner_started_at=row.get("owner_started_at"),
        planned_total=row.get("planned_total"),
        shard_index=row.get("shard_index"),
        shard_count=row.get("shard_count"),
        group_id=row.get("group_id"),
        plan_digest=row.get("plan_digest"),
        executor=row.get("executor"),
        budget_usd=row.get("budget_usd"),
        not_run=row.get("not_run"),
    )


def slot_row(row: Mapping[str, Any]) -> SlotRow:
    return SlotRow(
        run_id=row["run_id"],
        experiment_id=row["experiment_id"],
        eval_id=row["eval_id"],
        ordinal=row["ordinal"],
        attempt_id=row["attempt_id"],
        relation=Relation(row["relation"]),
        plan_reason=PlanReason(row["plan_reason"]),
        pass_rule=row.get("pass_rule"),
    )


def attempt_row(row: Mapping[str, Any]) -> AttemptRow:
    fields = {name: row[name] for name in ATTEMPT_COLUMNS}
    fields["kind"] = EvalKind(fields["kind"])
    fields["state"] = AttemptState(fields["state"])
    fields["gate"] = None if fields["gate"] is None else GateState(fields["gate"])
    relation = row.get("relation")
    plan_reason = row.get("plan_reason")
    return AttemptRow(
        **fields,
        relation=Relation.ORIGIN if relation is None else Relation(relation),
        plan_reason=None if plan_reason is None else PlanReason(plan_reason),
    )


def assertion_row(row: Mapping[str, Any]) -> AssertionRow:
    fields = {name: row[name] for name in ASSERTION_COLUMNS}
    fields["role"] = Role(fields["role"])
    fields["state"] = AssertionState(fields["state"])
    fields["or_stop"] = bool(fields["or_stop"])
    return AssertionRow(**fields)


def event_row(row: Mapping[str, Any]) -> EventRecord:
    return EventRecord(**{name: row[name] for name in EVENT_COLUMNS})


def turn_row(row: Mapping[str, Any], events: tuple[EventRecord, ...] = ()) -> TurnRecord:
    return TurnRecord(**{name: row[name] for name in TURN_COLUMNS}, events=events)
