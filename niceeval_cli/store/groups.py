"""Shard groups (scale.md): the shard runs that share a `group_id` read as one logical run.

A group's members are, per shard index, its most recent run (a CI job retried for shard 2 counts
once, as its last try), among the runs of the group's most recent shard count. Its plan is the
full slot list every shard stored (`run_plan`); the slots no member filled are "not run" — the
slots of a shard that never arrived, or that a shard did not reach. Its verdict is
`outcomes.decide_run` over every member's sealed rows against the planned total.

Once every member is settled (finished: its row, slots and plan are immutable, schema.py), the
verdict can change only when the members change (a shard retried, a shard merged), so the writer
that settles it (`merge`, the last shard run finishing) stores it in `group_verdicts`, keyed by
the exact members and their statuses (`verdict_key`) and the deciding NiceEval's version; a
reader whose current members match reads it instead of deciding again (the outcome groups and
the not-run count), any other reader decides as before. The SQL text and the
building of a group's row are pure; the readers below run them over a `Db` for `Store`.
"""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from .. import __version__
from .._ids import utc_now_iso
from .._shards import shard_of
from .._states import RunStatus
from ..outcomes import RunDecision, decide_run
from .db import Db
from .errors import StoreError, translated
from .queries import RUN_ORDER, RUN_STATUS_SQL
from .rows import PlanSlot, RunRow, run_row
from .schema import INSERT_GROUP_VERDICT, RUN_COLUMNS
from .summary import OutcomeGroup, outcome_groups

GROUP_KIND = "group"
RUN_KIND = "run"
COMPLETE = "complete"
INCOMPLETE = "incomplete"
GROUP_STATUS_FILTERS = (COMPLETE, INCOMPLETE)


class RunRead(NamedTuple):
    """A resolved run and what resolving it read (`Store.read_run`)."""

    run: RunRow
    groups: list[OutcomeGroup] | None  # a group's outcome groups, unfiltered; None for a run (or a stored verdict used)
    not_run: list[PlanSlot] | None  # a group's planned slots no member filled; None for a run


class GroupOutcome(NamedTuple):
    """What `Store.group_outcome` read and decided of a shard group."""

    members: list[dict[str, Any]]  # the member runs' rows, newest first
    groups: list[OutcomeGroup]  # their outcome groups, unfiltered
    decision: RunDecision | None  # None: a verdict is stored for these members (not decided again)


class GroupVerdict(NamedTuple):
    """A group's stored verdict: what its row needs besides the members' own columns."""

    exit_code: int
    not_run: int  # planned slots no member filled


# The statuses of a member run that can still change (its slots and plan with them).
_UNSETTLED = frozenset({RunStatus.RUNNING.value, RunStatus.ABANDONED.value})

VERDICT_SQL = "SELECT exit_code, not_run FROM group_verdicts WHERE group_id = ? AND members = ? AND decided_by = ?"
VERDICT_EXISTS_SQL = "SELECT 1 FROM group_verdicts WHERE group_id = ? AND members = ? AND decided_by = ?"


def verdict_key(members: Sequence[Mapping[str, Any]]) -> str | None:
    """The `group_verdicts.members` key of these members (sorted [run id, status] pairs as compact
    JSON), or None while one of them is unsettled (running or abandoned): such a group is always
    decided on read."""
    if any(m["status"] in _UNSETTLED for m in members):
        return None
    return json.dumps(sorted([m["id"], m["status"]] for m in members), ensure_ascii=False, separators=(",", ":"))


def verdict_params(group_id: str, key: str) -> list[str]:
    """The parameters of VERDICT_SQL / VERDICT_EXISTS_SQL: a verdict counts only for the NiceEval that decided it."""
    return [group_id, key, __version__]


def verdict_row(group_id: str, key: str, verdict: GroupVerdict, decided_at: str) -> tuple[Any, ...]:
    """The values of INSERT_GROUP_VERDICT, in column order."""
    return (group_id, key, __version__, verdict.exit_code, verdict.not_run, decided_at)


def members_sql(group: str) -> str:
    """Member run ids of the group named by the SQL expression `group` (a parameter)."""
    return (
        "SELECT id FROM (SELECT id, row_number() OVER (PARTITION BY shard_index "
        "ORDER BY started_at DESC, id DESC) AS newest FROM runs "
        f"WHERE group_id = {group} AND shard_count IS (SELECT shard_count FROM runs "
        f"WHERE group_id = {group} ORDER BY started_at DESC, id DESC LIMIT 1)) WHERE newest = 1"
    )


def scope_sql(ref: str) -> str:
    """The run ids a reference names: itself when it is a run id, else its group's members."""
    return (
        f"SELECT id FROM runs WHERE id = {ref} UNION ALL SELECT id FROM ({members_sql(ref)}) "
        f"WHERE NOT EXISTS (SELECT 1 FROM runs WHERE id = {ref})"
    )


def not_run_sql(members: Sequence[str], plan_run: str) -> tuple[str, list[Any]]:
    """Slots of `plan_run`'s recorded plan that no member run filled.

    One set of the filled keys (`NOT IN`: the key columns are NOT NULL) instead of a correlated
    probe per planned slot into each member.
    """
    marks = ", ".join("?" * len(members))
    sql = (
        "SELECT p.experiment_id, p.eval_id, p.ordinal, p.case_id FROM run_plan p WHERE p.run_id = ? "
        "AND (p.experiment_id, p.eval_id, p.ordinal) NOT IN (SELECT s.experiment_id, s.eval_id, s.ordinal "
        f"FROM run_slots s WHERE s.run_id IN ({marks}) AND s.attempt_id IS NOT NULL) "
        "ORDER BY p.experiment_id, p.eval_id, p.ordinal"
    )
    return sql, [plan_run, *members]


_STATUS_ORDER = (
    RunStatus.RUNNING, RunStatus.ABANDONED, RunStatus.INTERRUPTED, RunStatus.SETUP_ERROR,
    RunStatus.BUDGET_EXHAUSTED, RunStatus.FINISHED,
)


def decide_group(members: Sequence[Mapping[str, Any]], outcome: Sequence[OutcomeGroup],
                 not_run: Sequence[PlanSlot]) -> RunDecision:
    """The group's verdict: `decide_run` over its members' outcome groups (each standing for its
    `total` attempts) against the plan's total, a setup error when any member had one. `not_run`:
    the planned slots no member filled — an eval missing some of its attempts is decided only as
    far as they could not change it (a missing shard's passes would undo an "any" failure)."""
    statuses = {RunStatus(m["status"]) for m in members}
    missing = Counter((slot.experiment_id, slot.eval_id, slot.case_id) for slot in not_run)
    return decide_run(
        outcome, counts=[g.total for g in outcome], planned=members[0]["planned_total"],
        setup_error=RunStatus.SETUP_ERROR in statuses, interrupted=False,
        per_eval=False,  # readers take the exit code; the group's evals are never read
        missing=missing,
    )


def group_row(group_id: str, members: Sequence[Mapping[str, Any]], verdict: GroupVerdict) -> dict[str, Any]:
    """A group as one row with the runs' columns (newest member first in `members`), plus `kind`,
    `shards_merged`, `member_run_ids` and the member-level `run_status` (the worst of theirs);
    `verdict`: `decide_group`'s exit code and the not-run count, or the stored ones."""
    not_run = verdict.not_run
    newest = members[0]
    shard_count = newest["shard_count"]
    planned = newest["planned_total"]
    statuses = {RunStatus(m["status"]) for m in members}
    run_status = next(s for s in _STATUS_ORDER if s in statuses)
    shards = len({m["shard_index"] for m in members})
    ended = [m["ended_at"] for m in members]
    complete = shards == shard_count and not not_run and run_status not in (RunStatus.RUNNING, RunStatus.ABANDONED)
    experiments = ordered_union(json.loads(m["experiments"] or "[]") for m in reversed(members))
    row: dict[str, Any] = {column: None for column in RUN_COLUMNS}
    row.update(
        id=group_id,
        started_at=min(m["started_at"] for m in members),
        ended_at=None if None in ended else max(ended),
        status=COMPLETE if complete else INCOMPLETE,
        niceeval_version=newest["niceeval_version"],
        exit_code=int(verdict.exit_code),
        config_file=newest["config_file"],
        experiments=json.dumps(experiments, ensure_ascii=False),
        planned_total=planned,
        shard_count=shard_count,
        group_id=group_id,
        plan_digest=newest["plan_digest"],
        executor=newest["executor"],
        not_run=not_run,
        kind=GROUP_KIND,
        shards_merged=shards,
    )
    row["member_run_ids"] = tuple(m["id"] for m in members)
    row["run_status"] = run_status.value
    return row


def ordered_union(lists: Iterable[Sequence[str]]) -> list[str]:
    """Every id of the lists once, each list's order kept (each shard recorded its experiments in
    the niceeval.toml file's order; a shard may lack some): an id missing so far goes right after
    the id that precedes it in its own list."""
    merged: list[str] = []
    for ids in lists:
        after = -1
        for item in ids:
            if item in merged:
                after = merged.index(item)
            else:
                after += 1
                merged.insert(after, item)
    return merged


# ── reading and settling a group (over a Db; Store calls these) ─────────────────────────────


def read_group(db: Db, group_id: str, outcome: Callable[[], GroupOutcome | None] | None = None) -> RunRead:
    """A shard group as one run (`RunRow.kind == "group"`), with what deciding it read."""
    read = group_row_read(db, group_id, outcome)
    if read is None:
        raise StoreError(f"No group with id {group_id!r} in {db.path}; `niceeval query runs` lists them.")
    row, groups, not_run = read
    members, run_status, status = row.pop("member_run_ids"), row.pop("run_status"), row["status"]
    row["status"] = run_status
    run = dataclasses.replace(
        run_row(row), kind=GROUP_KIND, shards_merged=row["shards_merged"], member_run_ids=members,
        group_status=status,
    )
    return RunRead(run, groups, not_run)


def group_row_read(
    db: Db, group_id: str, outcome: Callable[[], GroupOutcome | None] | None = None
) -> tuple[dict[str, Any], list[OutcomeGroup] | None, list[PlanSlot]] | None:
    """The group's row (`group_row`) and the outcome groups and not-run slots it was decided
    from. The verdict stored for exactly these members is used when there is one (then the
    outcome groups are read only for a caller that passed `outcome`, and the not-run slots only
    if there are some); else it is decided here. `outcome`: what `group_outcome` read meanwhile
    on another connection; used when it saw the same members, else the outcome is read here."""
    members = group_members(db, group_id)
    if not members:
        return None
    ids = [m["id"] for m in members]
    stored = stored_verdict(db, group_id, members)
    not_run = not_run_slots(db, ids, ids[0]) if stored is None or stored.not_run else []
    known = outcome() if outcome is not None else None
    if known is not None and known.members != members:
        known = None
    groups = known.groups if known is not None else None
    if stored is not None:
        if groups is None and outcome is not None:  # the caller wants them (view's header)
            groups = outcome_groups(db, ids)
        return group_row(group_id, members, stored), groups, not_run
    if groups is None:
        groups = outcome_groups(db, ids)
    decision = known.decision if known is not None else None
    if decision is None:
        decision = decide_group(members, groups, not_run)
    return group_row(group_id, members, GroupVerdict(int(decision.exit_code), len(not_run))), groups, not_run


def group_members(db: Db, group_id: str) -> list[dict[str, Any]]:
    """The group's member runs' rows (`members_sql`), newest first, each with its read status."""
    columns = ", ".join(  # the members' own not_run is not needed: the group's is counted apart
        f"{RUN_STATUS_SQL} AS status" if c == "status" else f"runs.{c}" for c in RUN_COLUMNS)
    return db.rows(
        "Reading a group's runs",
        f"SELECT {columns} FROM runs WHERE runs.id IN ({members_sql(':g')}) ORDER BY {RUN_ORDER}",
        {"g": group_id},
    )


def stored_verdict(db: Db, group_id: str, members: Sequence[Mapping[str, Any]]) -> GroupVerdict | None:
    """The verdict stored for exactly these members (and their statuses), if any."""
    key = verdict_key(members)
    if key is None:
        return None
    with translated(db.path, "Reading a group's verdict"):
        row = db.conn.execute(VERDICT_SQL, verdict_params(group_id, key)).fetchone()
    return None if row is None else GroupVerdict(int(row[0]), int(row[1]))


def store_verdicts(db: Db, group_ids: Iterable[str], *, complete_only: bool = False) -> None:
    """Inside the caller's write transaction: decide and store the verdict of each group whose
    members are all settled and that has none stored for them (`complete_only`: only when every
    shard index has a member). Derived data: a reader that finds none decides alike."""
    conn = db.conn
    decided_at = utc_now_iso()
    for group_id in dict.fromkeys(group_ids):
        members = group_members(db, group_id)
        key = verdict_key(members) if members else None
        if key is None or (complete_only and len({m["shard_index"] for m in members}) != members[0]["shard_count"]):
            continue
        if conn.execute(VERDICT_EXISTS_SQL, verdict_params(group_id, key)).fetchone() is not None:
            continue
        ids = [m["id"] for m in members]
        unfilled = not_run_slots(db, ids, ids[0])
        verdict = GroupVerdict(int(decide_group(members, outcome_groups(db, ids), unfilled).exit_code),
                               len(unfilled))
        conn.execute(INSERT_GROUP_VERDICT, verdict_row(group_id, key, verdict, decided_at))


def group_outcome(db: Db, group_id: str) -> GroupOutcome | None:
    """A group's members, outcome groups and the verdict decided from them (None when one is
    stored for these members); None: no such group. See `Store.group_outcome`."""
    members = group_members(db, group_id)
    if not members:
        return None
    ids = [m["id"] for m in members]
    groups = outcome_groups(db, ids)
    if stored_verdict(db, group_id, members) is not None:
        return GroupOutcome(members, groups, None)
    return GroupOutcome(members, groups, decide_group(members, groups, not_run_slots(db, ids, ids[0])))


def group_plans(db: Db, group_id: str) -> set[tuple[str | None, int]]:
    """(plan digest, shard count) of a group's shard runs: one pair when they are consistent."""
    rows = db.rows(
        "Reading a group's plans", "SELECT DISTINCT plan_digest, shard_count FROM runs WHERE group_id = ? "
        "AND shard_count IS NOT NULL", [group_id],
    )
    return {(row["plan_digest"], row["shard_count"]) for row in rows}


def not_run_slots(
    db: Db, members: Sequence[str], plan_run: str, shard: tuple[int, int] | None = None
) -> list[PlanSlot]:
    """Slots of `plan_run`'s plan no member filled (`not_run_sql`); `shard` (index, count): only
    that shard's."""
    sql, params = not_run_sql(members, plan_run)
    rows = db.rows("Reading a run's plan", sql, params)
    slots = [PlanSlot(r["experiment_id"], r["eval_id"], r["ordinal"], r["case_id"]) for r in rows]
    if shard is not None:
        slots = [p for p in slots if shard_of(p.experiment_id, p.eval_id, p.ordinal, shard[1]) == shard[0]]
    return slots
