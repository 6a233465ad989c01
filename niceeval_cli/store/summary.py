"""A run's attempts grouped by outcome: what the run decision, `view` and the summary count.

One GROUP BY query instead of one typed row per attempt, so the header of a run with 100 000
attempts costs a few hundred milliseconds (benchmarks/view_large.py). Attempts with the same
experiment, eval, case, state, gate and score columns collapse into one group with a count; the
readers expand them where `outcomes` needs one item per attempt. The SQL and the typed rows are
built purely; `outcome_groups` and `run_outcome` run them over a `Db` for `Store`.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Iterator, Sequence
from typing import Any, NamedTuple

from .._states import (
    ATTEMPT_STATE_OF,
    KIND_OF,
    AttemptState,
    EvalKind,
    GateState,
    Relation,
)
from .db import Db
from .errors import translated
from .queries import Names, Where, filter_evals, filter_experiments

_RELATION = {r.value: r for r in Relation}

_GROUP_COLUMNS = (
    "s.experiment_id", "s.eval_id", "a.kind", "a.state", "a.gate", "a.score", "a.max_score",
    "a.unavailable_weight", "a.partial_score", "COALESCE(s.relation, 'origin')", "s.pass_rule",
    "a.case_id",
)


class OutcomeGroup(NamedTuple):
    """`total` attempts of one (experiment, eval, case) that share every outcome column.

    A NamedTuple, not a dataclass: a large run has tens of thousands of groups, and tuples are
    built in C. `case_id` comes last (with a default) so positional builders of the schema-2
    shape still work.
    """

    experiment_id: str
    eval_id: str
    kind: EvalKind
    state: AttemptState
    gate: GateState | None
    score: float | None
    max_score: float | None
    unavailable_weight: float | None
    partial_score: float | None
    relation: Relation
    pass_rule: str | None  # the eval's pass rule in this run, as recorded on its slots
    total: int  # attempts in the group (not `count`: that is a tuple method)
    case_id: str | None = None  # datasets.md: NULL for evals without cases


def outcome_groups_select(
    run_ids: Sequence[str], *, experiment: Names = None, eval_prefix: Names = None, extra: Sequence[str] = (),
    in_sql: bool = False,
) -> tuple[str, dict[str, Any], bool]:
    """The runs' attempts (reused ones included) grouped by outcome, by experiment, eval and case;
    and whether the rows come ungrouped, for `outcome_groups_from(grouped=False)` to group.

    One run's attempts are read in its slot key's order (experiment, eval, ordinal: the primary
    key, so SQLite sorts nothing) and grouped eval by eval as they come: a run of 20 000 evals
    has 20 000 groups, and GROUP BY sorted all of them on twelve columns (a third of the read).
    Several runs' (a shard group's) slots interleave, so SQL groups them; so it does one run's
    when asked (`in_sql`): see `outcome_groups`."""
    where = Where()
    where.add(f"s.run_id IN ({', '.join(where.param(r) for r in run_ids)})")
    filter_experiments(where, experiment, "a.experiment_id")
    filter_evals(where, eval_prefix)
    columns = ", ".join(_GROUP_COLUMNS)
    source = "run_slots s JOIN attempts a ON a.id = s.attempt_id"
    if len(run_ids) == 1 and not in_sql:
        ordered = "ORDER BY s.experiment_id, s.eval_id"
        more = "".join(f", {column}" for column in extra)  # after the count
        return f"SELECT {columns}, 1{more} FROM {source}{where.sql()} {ordered}", where.params, False
    if extra:
        raise ValueError("extra columns are read for one run's ungrouped rows only")
    return f"SELECT {columns}, COUNT(*) FROM {source}{where.sql()} GROUP BY {columns}", where.params, True


_GATE_OR_NONE: dict[str | None, GateState | None] = {None: None, **{g.value: g for g in GateState}}


def _sql_order(value: object) -> tuple[bool, object]:
    """SQLite's order within one column of the group key: NULL first (the key's columns are typed)."""
    return (value is not None, value)


def _group_key(row: tuple[Any, ...]) -> tuple[tuple[bool, object], ...]:
    return tuple(_sql_order(v) for v in row)


def _by_eval(rows: Iterable[tuple[Any, ...]]) -> Iterator[list[tuple[Any, ...]]]:
    """Rows in (experiment, eval) order, each eval's as one list."""
    current: list[tuple[Any, ...]] = []
    for row in rows:
        if current and (row[1] != current[0][1] or row[0] != current[0][0]):
            yield current
            current = []
        current.append(row)
    if current:
        yield current


def grouped_by_eval(rows: Iterable[tuple[Any, ...]]) -> Iterator[tuple[Any, ...]]:
    """Rows of one attempt each, in (experiment, eval) order, as GROUP BY over every column but the
    last would give them (the last is each row's count, added up): the same groups in the same
    order. Groups never span evals, so each eval's few rows are grouped alone."""
    for one_eval in _by_eval(rows):
        yield from _collapse(one_eval)


def _collapse(rows: list[tuple[Any, ...]]) -> Iterator[tuple[Any, ...]]:
    if len(rows) == 1:  # most evals: one attempt, or a run of 20 000 evals would pay for a dict each
        yield rows[0]
        return
    totals: dict[tuple[Any, ...], int] = {}
    for row in rows:
        key = row[:-1]
        totals[key] = totals.get(key, 0) + row[-1]
    for key in sorted(totals, key=_group_key):
        yield (*key, totals[key])


class PassedEvals(NamedTuple):
    """`evals` pass-style evals of one experiment, none with cases, whose every attempt passed,
    each with `attempts_each` attempts under `pass_rule`: what a run's verdict and summary count
    of them, without naming them. A run of 20 000 evals that all pass is one such row, not 20 000
    groups to build, fold and tally one by one (what `view` and reports read keeps the groups)."""

    experiment_id: str
    pass_rule: str | None
    attempts_each: int
    evals: int
    reused: int  # of their attempts, those the run adopted (relation `reference`)

    @property
    def attempts(self) -> int:
        return self.attempts_each * self.evals


#: Per attempt: it passed, pass-style, without a gate or a case (what a counted eval is made of).
PASSED_SQL = "(a.kind = 'pass' AND a.state = 'passed' AND a.gate IS NULL AND a.case_id IS NULL)"


class RunOutcomeRows(NamedTuple):
    """One run's outcome as its verdict and summary read it (`Store.run_outcome_rows`)."""

    groups: list[OutcomeGroup]  # of every eval but those counted in `passed_evals`
    passed_evals: list[PassedEvals]
    costs: list[dict[str, Any]]  # per experiment, as `Store.costs` gives them


def outcome_split_select(run_id: str) -> tuple[str, dict[str, Any]]:
    """One run's attempts as `outcome_groups_select` reads them ungrouped, each row ending with
    `PASSED_SQL`'s flag and the attempt's reported and estimated cost, for `outcome_split_from`."""
    sql, params, _ = outcome_groups_select([run_id], extra=(PASSED_SQL, *COST_COLUMNS))
    return sql, params


#: The attempt's costs an experiment's sums are made of, in `COST_KEYS` order: the system under
#: test's reported and estimated, then the judge's (judge-trust.md: never added together).
COST_COLUMNS = ("a.cost_usd", "a.estimated_cost_usd", "a.judge_cost_usd", "a.judge_estimated_cost_usd")
COST_KEYS = ("reported", "estimated", "judge_reported", "judge_estimated")
_NO_COSTS = (None,) * len(COST_KEYS)


def _add_cost(costs: dict[str, list[Any]], row: tuple[Any, ...]) -> None:
    entry = costs.get(row[0])
    if entry is None:
        entry = costs[row[0]] = [0, *([None, 0] * len(COST_KEYS))]
    entry[0] += 1
    found = row[14:14 + len(COST_KEYS)]
    if found == _NO_COSTS:  # most attempts (a trivial eval's, a reused one's without costs): nothing to add
        return
    for i, value in enumerate(found):
        if value is not None:
            at = 1 + 2 * i
            entry[at] = value if entry[at] is None else entry[at] + value
            entry[at + 1] += 1


def _cost_row(experiment_id: str, sums: list[Any]) -> dict[str, Any]:
    """An experiment's sums as `Store.costs` gives them: `reported`, `reported_n`, ..."""
    row: dict[str, Any] = {"experiment_id": experiment_id, "attempts": sums[0]}
    for i, key in enumerate(COST_KEYS):
        row[key], row[f"{key}_n"] = sums[1 + 2 * i], sums[2 + 2 * i]
    return row


#: What marks a slot's rule decided by its interval (`outcomes.IntervalRule` as text, "0.8 until decided
#: at 0.95"): the store only tells such a rule apart, it never folds one.
DECIDED_BY_INTERVAL = " until decided at "


def outcome_split_from(rows: Iterable[tuple[Any, ...]], unsettled: Collection[tuple[str, str]] = ()) -> RunOutcomeRows:
    """`outcome_split_select`'s rows: the evals whose every attempt passed under one pass rule,
    counted per experiment, pass rule and attempts; every other eval's groups, as
    `outcome_groups_from(grouped=False)` gives them; and the cost per experiment (in one pass:
    `Store.costs` read the same 20 000 attempts again). `unsettled`: (experiment, eval) never counted
    (some of their planned attempts never ran, so passing so far is not yet passed)."""
    others: list[tuple[Any, ...]] = []
    counted: dict[tuple[str, str | None, int], list[int]] = {}  # → [evals, reused attempts]
    costs: dict[str, list[Any]] = {}  # experiment → [attempts, then a (sum, n) per COST_KEYS]
    for one_eval in _by_eval(rows):
        for row in one_eval:
            _add_cost(costs, row)
        first = one_eval[0]
        rows_rule = first[10]
        # Most evals have one attempt, and it passed: the flag alone says so.
        # A rule decided by its interval (`run --until-decided`) may leave an all-passing eval
        # undecided: such evals are listed, never counted as passed.
        if (first[13] if len(one_eval) == 1 else all(r[13] and r[10] == rows_rule for r in one_eval)) and not (
                isinstance(rows_rule, str) and DECIDED_BY_INTERVAL in rows_rule) and not (
                unsettled and (first[0], first[1]) in unsettled):
            key = (first[0], rows_rule, len(one_eval))
            entry = counted.get(key)
            if entry is None:
                entry = counted[key] = [0, 0]
            entry[0] += 1
            entry[1] += (first[9] == "reference") if len(one_eval) == 1 else sum(r[9] == "reference" for r in one_eval)
        else:
            others.extend(_collapse([r[:13] for r in one_eval]))
    return RunOutcomeRows(
        outcome_groups_from(others),
        [PassedEvals(e, rule, n, evals, reused) for (e, rule, n), (evals, reused) in counted.items()],
        [_cost_row(e, sums) for e, sums in costs.items()],
    )


def count_passed_evals(groups: Sequence[OutcomeGroup], unsettled: Collection[tuple[str, str]] = (),
                       ) -> tuple[list[OutcomeGroup], list[PassedEvals]]:
    """Outcome groups split as `outcome_split_from` splits the rows they were grouped from: the
    evals whose every attempt passed under one pass rule (not one decided by its interval),
    counted per experiment, pass rule and attempts (in the order their evals come); every other
    eval's groups, in their order. For a reader that holds the groups already (`view`'s page):
    tallied so, 20 000 passing evals are counted, not listed (`reports._tally.tally`).
    `unsettled`: as `outcome_split_from`'s `listed`."""
    evals: dict[tuple[str, str], list[Any]] = {}  # → [all passed so far, pass rule, attempts, reused]
    for group in groups:
        key = (group.experiment_id, group.eval_id)
        passed = (group.kind is EvalKind.PASS and group.state is AttemptState.PASSED and group.gate is None
                  and group.case_id is None)
        reused = group.total if group.relation is Relation.REFERENCE else 0
        entry = evals.get(key)
        if entry is None:
            evals[key] = [passed, group.pass_rule, group.total, reused]
        else:
            entry[0] = entry[0] and passed and group.pass_rule == entry[1]
            entry[2] += group.total
            entry[3] += reused
    counted: dict[tuple[str, str | None, int], list[int]] = {}  # → [evals, reused attempts]
    listed: set[tuple[str, str]] = set()
    for key, (passed, rule, attempts, reused) in evals.items():
        if not passed or (isinstance(rule, str) and DECIDED_BY_INTERVAL in rule) or key in unsettled:
            listed.add(key)
            continue
        entry = counted.get((key[0], rule, attempts))
        if entry is None:
            entry = counted[(key[0], rule, attempts)] = [0, 0]
        entry[0] += 1
        entry[1] += reused
    others = [g for g in groups if (g.experiment_id, g.eval_id) in listed]
    return others, [PassedEvals(e, rule, n, evals_, reused) for (e, rule, n), (evals_, reused) in counted.items()]


def outcome_groups_from(rows: Iterable[tuple[Any, ...]], *, grouped: bool = True) -> list[OutcomeGroup]:
    """Typed groups from `outcome_groups_select`'s rows (`grouped`: as it said).

    Built with `tuple.__new__`: the NamedTuple's own `__new__` is a Python frame per group (a third of
    the time for 20 000 groups). SQLite hands each row new strings; the experiment ids and pass
    rules repeat, so each distinct one is kept once (the groups live to the end of a run: else
    20 000 of them hold 20 000 copies of "default" and "all").
    """
    if not grouped:
        rows = grouped_by_eval(rows)
    new = tuple.__new__
    seen: dict[str, str] = {}  # an experiment id and a pass rule that spell alike are one string
    one = seen.setdefault
    return [
        new(OutcomeGroup, (one(e, e), v, KIND_OF[k], ATTEMPT_STATE_OF[st], _GATE_OR_NONE[g], sc, ms, uw, ps,
                           _RELATION[rel],
                           rule if rule is None else one(rule, rule), n, case))
        for e, v, k, st, g, sc, ms, uw, ps, rel, rule, case, n in rows
    ]


def outcome_groups(
    db: Db, run_ids: Sequence[str], *, experiment: Names = None, eval_prefix: Names = None, in_sql: bool = False,
) -> list[OutcomeGroup]:
    """The outcome groups of these exact runs' slots (`outcome_groups_select`), read.

    `in_sql`: grouped by SQL's GROUP BY even for one run (the same groups in the same order), for
    a reader in a thread beside other work (`view`'s header). SQLite sorts every row within the
    statement's first step, which runs without the GIL; grouped here, each of the run's rows is
    handed over, and each hand-over waits for the GIL. At 5 attempts an eval GROUP BY also costs
    less CPU, at 1 attempt an eval a little more (benchmarks/README.md, "Session 10")."""
    sql, params, grouped = outcome_groups_select(run_ids, experiment=experiment, eval_prefix=eval_prefix,
                                                 in_sql=in_sql)
    with translated(db.path, "Counting a run's attempts"):
        return outcome_groups_from(db.conn.execute(sql, params), grouped=grouped)


# Given slots of one run, as one JSON parameter of [experiment id, eval id, ordinal] lists (a
# round of 20 000 units would be 60 000 bound values); CROSS JOIN: each slot one key seek.
_SLOTS_SELECT = (
    "WITH want(experiment_id, eval_id, ordinal) AS (SELECT json_extract(value, '$[0]'), "
    "json_extract(value, '$[1]'), json_extract(value, '$[2]') FROM json_each(?2)) "
    f"SELECT {', '.join(_GROUP_COLUMNS)}, 1 FROM want w CROSS JOIN run_slots s ON s.run_id = ?1 "
    "AND s.experiment_id = w.experiment_id AND s.eval_id = w.eval_id AND s.ordinal = w.ordinal "
    "JOIN attempts a ON a.id = s.attempt_id ORDER BY s.experiment_id, s.eval_id"
)


def slot_outcome_groups(db: Db, run_id: str, slots: Iterable[tuple[str, str, int]]) -> list[OutcomeGroup]:
    """The outcome groups of the attempts filling these slots of one run, as `outcome_groups`
    groups them (a slot nothing filled is absent): `run --until-decided` counts what each round
    sealed, not the run again."""
    want = json.dumps([list(slot) for slot in slots], ensure_ascii=False)
    with translated(db.path, "Counting a run's attempts"):
        return outcome_groups_from(db.conn.execute(_SLOTS_SELECT, [run_id, want]), grouped=False)


def run_outcome(db: Db, run_id: str, unsettled: Collection[tuple[str, str]] = ()) -> RunOutcomeRows:
    """One run's outcome for its verdict and summary (`outcome_split_select`), read in one pass
    (`unsettled`: as `outcome_split_from`)."""
    sql, params = outcome_split_select(run_id)
    with translated(db.path, "Counting a run's attempts"):
        return outcome_split_from(db.conn.execute(sql, params), unsettled)
