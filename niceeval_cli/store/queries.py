"""SQL for the readers: filters (`--experiment`, `--eval`, `--state`, `--limit`) and the reading order.

Order (outcomes.md, "Reading surfaces"; cli.md, `query`): attempts by attempt severity, then
experiment, eval and ordinal; assertion results by their own severity across all attempts, then
attempt order, then registration ordinal. Severity CASE expressions come from `outcomes`, the one
home of that order. Pure: builds text and parameters, runs nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .._selectors import experiment_sql, is_glob, sqlite_glob
from .._states import AssertionState, AttemptState, Derived, GateState, RunStatus
from ..outcomes import assertion_severity_sql, attempt_severity_sql
from .errors import StoreError
from .schema import RUN_COLUMNS

GATE_FAILED = Derived.GATE_FAILED
GATE_UNAVAILABLE = Derived.GATE_UNAVAILABLE
FAILED_SHORTHAND = "failed"  # for assertions: mismatched + below

ATTEMPT_STATE_FILTERS = (*(s.value for s in AttemptState), GATE_FAILED, GATE_UNAVAILABLE)
ASSERTION_STATE_FILTERS = (*(s.value for s in AssertionState), FAILED_SHORTHAND)
RUN_STATUS_FILTERS = tuple(s.value for s in RunStatus)

ATTEMPT_ORDER = (
    f"{attempt_severity_sql('a.state', 'a.gate')}, a.experiment_id, a.eval_id, a.ordinal, a.id"
)
ASSERTION_ORDER = f"{assertion_severity_sql('r.state')}, {ATTEMPT_ORDER}, r.ordinal"
RUN_ORDER = "runs.started_at DESC, runs.id DESC"
_SQLITE_INT_MAX = 2**63 - 1
TURN_ORDER = f"{ATTEMPT_ORDER}, t.ordinal"
EVENT_ORDER = f"{ATTEMPT_ORDER}, e.turn_ordinal, e.seq"

# A `running` run whose owner process is gone reads as `abandoned` (owner.py); readers never write.
RUN_STATUS_SQL = (
    f"CASE WHEN runs.status = '{RunStatus.RUNNING}' AND niceeval_owner_gone(runs.owner_pid, "
    f"runs.owner_host, runs.owner_started_at) THEN '{RunStatus.ABANDONED}' ELSE runs.status END"
)
# Planned slots (run_plan) that no attempt filled; NULL for a run whose plan was not recorded.
# A run that recorded its plan has a planned total (schema 3); since schema 4 a run that reuses
# every result has no `run_plan` rows at all (its plan is its reference slots), and counts 0.
RUN_NOT_RUN_SQL = (
    "CASE WHEN runs.planned_total IS NOT NULL OR EXISTS (SELECT 1 FROM run_plan p WHERE p.run_id = runs.id) THEN "
    "(SELECT count(*) FROM run_plan p WHERE p.run_id = runs.id AND NOT EXISTS (SELECT 1 FROM run_slots s "
    "WHERE s.run_id = p.run_id AND s.experiment_id = p.experiment_id AND s.eval_id = p.eval_id "
    "AND s.ordinal = p.ordinal) AND (runs.shard_count IS NULL OR "
    "niceeval_shard_of(p.experiment_id, p.eval_id, p.ordinal, runs.shard_count) = runs.shard_index)) END"
)
# `kind` (schema 9): `run` or `regrade`; a run recorded before reads `run`. `query runs` also lists
# shard groups (scale.md), whose rows say `group` there.
_RUN_COLUMN_SQL = {"status": f"{RUN_STATUS_SQL} AS status", "kind": "COALESCE(runs.kind, 'run') AS kind"}
RUN_SELECT = ", ".join(
    _RUN_COLUMN_SQL.get(column, f"runs.{column}") for column in RUN_COLUMNS
) + f", {RUN_NOT_RUN_SQL} AS not_run"
RUN_QUERY_SELECT = f"{RUN_SELECT}, NULL AS shards_merged"

Names = str | Sequence[str] | None


def as_tuple(value: Names) -> tuple[str, ...]:
    """Filters accept one value or several (repeatable flags)."""
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    return tuple(value)


@dataclass
class Where:
    """AND-ed clauses with named parameters (values never enter the SQL text)."""

    clauses: list[str] = field(default_factory=list)
    params: dict[str, Any] = field(default_factory=dict)

    def param(self, value: Any) -> str:
        name = f"p{len(self.params)}"
        self.params[name] = value
        return f":{name}"

    def add(self, clause: str) -> None:
        self.clauses.append(clause)

    def any_of(self, clauses: Sequence[str]) -> None:
        if clauses:
            self.clauses.append("(" + " OR ".join(clauses) + ")")

    def sql(self) -> str:
        return " WHERE " + " AND ".join(self.clauses) if self.clauses else ""

    def limit(self, limit: int | None) -> str:
        if limit is None:
            return ""
        if limit < 0:
            raise StoreError(f"--limit must be 0 or more, not {limit}.")
        # a limit past SQLite's 64-bit integers (`--limit 99999999999999999999`) limits nothing
        return f" LIMIT {self.param(min(int(limit), _SQLITE_INT_MAX))}"


def _check_states(states: tuple[str, ...], allowed: tuple[str, ...], what: str) -> None:
    unknown = [s for s in states if s not in allowed]
    if unknown:
        raise StoreError(
            f"Unknown {what} state {', '.join(repr(s) for s in unknown)}; "
            f"choose from {', '.join(allowed)}."
        )


def filter_experiments(where: Where, experiments: Names, column: str) -> None:
    """Experiment selectors (`_selectors.selects_experiment`: an exact id, or a group `models/`)."""
    where.any_of([experiment_sql(experiment, column, where.param(experiment)) for experiment in as_tuple(experiments)])


# An attempt's identity as an id (`<module id>/<name>[<case id>]`: authoring.md), so `--eval` finds
# an eval's attempts sealed while its module had one eval (shown as `<module id>` then); NULL for
# attempts sealed before schema 5, found by their eval id alone.
IDENTITY_ID_SQL = (
    "(a.eval_module || '/' || a.eval_name || CASE WHEN a.case_id IS NULL THEN '' ELSE '[' || a.case_id || ']' END)"
)


def filter_evals(where: Where, prefixes: Names, column: str = "a.eval_id") -> None:
    # substr, not LIKE: eval ids often contain `_`, a LIKE wildcard.
    # A selector with `*` or `?` is a glob over the whole id, as for `niceeval run` (_selectors).
    clauses = []
    for prefix in as_tuple(prefixes):
        for matched in (column, IDENTITY_ID_SQL) if column == "a.eval_id" else (column,):
            if is_glob(prefix):
                clauses.append(f"{matched} GLOB {where.param(sqlite_glob(prefix))}")
                continue
            p = where.param(prefix)
            clauses.append(f"substr({matched}, 1, length({p})) = {p}")
    where.any_of(clauses)


def filter_attempt_states(where: Where, states: Names) -> None:
    wanted = as_tuple(states)
    _check_states(wanted, ATTEMPT_STATE_FILTERS, "attempt")
    clauses = []
    for state in wanted:
        if state == GATE_FAILED:
            clauses.append(f"a.gate = '{GateState.FAILED}'")  # unrankable / errored with a failed gate too
        elif state == GATE_UNAVAILABLE:
            clauses.append(f"(a.state = '{AttemptState.SCORED}' AND a.gate = '{GateState.UNAVAILABLE}')")
        else:
            clauses.append(f"a.state = {where.param(state)}")
    where.any_of(clauses)


def filter_assertion_states(where: Where, states: Names) -> None:
    wanted = as_tuple(states)
    _check_states(wanted, ASSERTION_STATE_FILTERS, "assertion")
    expanded: list[str] = []
    for state in wanted:
        if state == FAILED_SHORTHAND:
            expanded += [AssertionState.MISMATCHED.value, AssertionState.BELOW.value]
        else:
            expanded.append(state)
    if expanded:
        # IN, not OR: SQLite can then use the (state, attempt_id) index for each state.
        wanted_states = ", ".join(where.param(s) for s in dict.fromkeys(expanded))
        where.add(f"r.state IN ({wanted_states})")


def filter_run_statuses(where: Where, states: Names) -> None:
    wanted = as_tuple(states)
    _check_states(wanted, RUN_STATUS_FILTERS, "run")
    where.any_of([f"{RUN_STATUS_SQL} = {where.param(s)}" for s in wanted])


def attempts_source(where: Where, run_id: str | Sequence[str] | None) -> str:
    """Attempts `a` with their slot `s` in one run or several (a shard group's members; origin and
    reference), or every attempt once."""
    if run_id is None:
        return "attempts a LEFT JOIN run_slots s ON s.attempt_id = a.id AND s.run_id = a.run_id"
    ids = [run_id] if isinstance(run_id, str) else list(run_id)
    where.add(f"s.run_id IN ({', '.join(where.param(i) for i in ids) or 'NULL'})")
    return "run_slots s JOIN attempts a ON a.id = s.attempt_id"


def attempts_select(
    run_id: str | Sequence[str] | None, *, experiment: Names, eval_prefix: Names, states: Names, limit: int | None,
    slot_columns: Sequence[str] = ("relation",), columns: Sequence[str] | None = None,
) -> tuple[str, dict[str, Any]]:
    """`columns`: only these columns of `attempts` (default every one)."""
    where = Where()
    source = attempts_source(where, run_id)
    filter_experiments(where, experiment, "a.experiment_id")
    filter_evals(where, eval_prefix)
    filter_attempt_states(where, states)
    chosen = "a.*" if columns is None else ", ".join(f"a.{c}" for c in columns)
    extra = "".join(f", {_slot_column(c)} AS {c}" for c in slot_columns)
    sql = f"SELECT {chosen}{extra} FROM {source}{where.sql()} ORDER BY {ATTEMPT_ORDER}"
    return sql + where.limit(limit), where.params


def _slot_column(name: str) -> str:
    return "COALESCE(s.relation, 'origin')" if name == "relation" else f"s.{name}"


def assertions_select(
    run_id: str | Sequence[str] | None, *, experiment: Names, eval_prefix: Names, states: Names, limit: int | None
) -> tuple[str, dict[str, Any]]:
    where = Where()
    source = attempts_source(where, run_id)
    filter_experiments(where, experiment, "a.experiment_id")
    filter_evals(where, eval_prefix)
    filter_assertion_states(where, states)
    sql = (
        "SELECT r.*, a.run_id AS run_id, a.experiment_id AS experiment_id, a.eval_id AS eval_id, "
        f"a.ordinal AS attempt_ordinal, {_slot_column('relation')} AS relation "
        f"FROM {source} JOIN assertion_results r ON r.attempt_id = a.id"
        f"{where.sql()} ORDER BY {ASSERTION_ORDER}"
    )
    return sql + where.limit(limit), where.params


def transcript_select(
    target: str, run_id: str | Sequence[str] | None, *, experiment: Names, eval_prefix: Names, states: Names,
    limit: int | None,
) -> tuple[str, dict[str, Any]]:
    """`query turns|events`: the rows of the selected attempts, attempts worst first."""
    where = Where()
    source = attempts_source(where, run_id)
    filter_experiments(where, experiment, "a.experiment_id")
    filter_evals(where, eval_prefix)
    filter_attempt_states(where, states)
    alias, table, order = ("t", "turns", TURN_ORDER) if target == "turns" else ("e", "events", EVENT_ORDER)
    sql = (
        f"SELECT {alias}.*, a.run_id AS run_id, a.experiment_id AS experiment_id, a.eval_id AS eval_id, "
        f"a.ordinal AS attempt_ordinal, {_slot_column('relation')} AS relation "
        f"FROM {source} JOIN {table} {alias} ON {alias}.attempt_id = a.id"
        f"{where.sql()} ORDER BY {order}"
    )
    return sql + where.limit(limit), where.params


def costs_select(
    run_id: str | Sequence[str], *, experiment: Names, eval_prefix: Names
) -> tuple[str, dict[str, Any]]:
    """Reported and estimated cost per experiment of a run's attempts (agents.md, "Cost"), the
    judge's apart (judge-trust.md)."""
    where = Where()
    source = attempts_source(where, run_id)
    filter_experiments(where, experiment, "a.experiment_id")
    filter_evals(where, eval_prefix)
    sql = (
        "SELECT a.experiment_id AS experiment_id, count(*) AS attempts, "
        "sum(a.cost_usd) AS reported, count(a.cost_usd) AS reported_n, "
        "sum(a.estimated_cost_usd) AS estimated, count(a.estimated_cost_usd) AS estimated_n, "
        "sum(a.judge_cost_usd) AS judge_reported, count(a.judge_cost_usd) AS judge_reported_n, "
        "sum(a.judge_estimated_cost_usd) AS judge_estimated, count(a.judge_estimated_cost_usd) AS judge_estimated_n "
        f"FROM {source}{where.sql()} GROUP BY a.experiment_id"
    )
    return sql, where.params


def runs_select(
    run_id: str | Sequence[str] | None, *, experiment: Names, states: Names, limit: int | None
) -> tuple[str, dict[str, Any]]:
    where = Where()
    if run_id is not None:
        ids = [run_id] if isinstance(run_id, str) else list(run_id)
        where.add(f"runs.id IN ({', '.join(where.param(i) for i in ids) or 'NULL'})")
    probe = Where(params=where.params)
    filter_experiments(probe, experiment, "j.value")
    if probe.clauses:
        where.add(f"EXISTS (SELECT 1 FROM json_each(runs.experiments) j WHERE {probe.clauses[0]})")
    filter_run_statuses(where, states)
    sql = f"SELECT {RUN_QUERY_SELECT} FROM runs{where.sql()} ORDER BY {RUN_ORDER}"
    return sql + where.limit(limit), where.params
