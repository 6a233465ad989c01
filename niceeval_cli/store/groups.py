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
reader whose current members match reads it instead of deciding again (4 000 outcome groups:
~7 ms, and the not-run count), any other reader decides as before. Pure: SQL text and the
building of a group's row; `Store` runs it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from .. import __version__
from .._states import RunStatus
from ..outcomes import RunDecision, decide_run
from .schema import RUN_COLUMNS
from .summary import OutcomeGroup

GROUP_KIND = "group"
RUN_KIND = "run"
COMPLETE = "complete"
INCOMPLETE = "incomplete"
GROUP_STATUS_FILTERS = (COMPLETE, INCOMPLETE)


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
    probe per planned slot into each member: 8 000 planned slots, 12 ms → 8 ms.
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


def decide_group(members: Sequence[Mapping[str, Any]], outcome: Sequence[OutcomeGroup]) -> RunDecision:
    """The group's verdict: `decide_run` over its members' outcome groups (each standing for its
    `total` attempts) against the plan's total, a setup error when any member had one."""
    statuses = {RunStatus(m["status"]) for m in members}
    return decide_run(
        outcome, counts=[g.total for g in outcome], planned=members[0]["planned_total"],
        setup_error=RunStatus.SETUP_ERROR in statuses, interrupted=False,
        per_eval=False,  # readers take the exit code; the group's evals are never read
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
