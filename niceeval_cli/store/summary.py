"""A run's attempts grouped by outcome: what the run decision, `view` and the summary count.

One GROUP BY query instead of one typed row per attempt, so the header of a run with 100 000
attempts costs a few hundred milliseconds (benchmarks/view_large.py). Attempts with the same
experiment, eval, case, state, gate and score columns collapse into one group with a count; the
readers expand them where `outcomes` needs one item per attempt. Pure: builds SQL and typed rows;
`Store.outcome_rows` runs it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

from .._states import AttemptState, EvalKind, GateState, Relation
from .queries import Names, Where, filter_evals, filter_experiments

_KIND = {k.value: k for k in EvalKind}
_STATE = {s.value: s for s in AttemptState}
_GATE = {g.value: g for g in GateState}
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
    run_ids: Sequence[str], *, experiment: Names = None, eval_prefix: Names = None
) -> tuple[str, dict[str, Any]]:
    """The runs' attempts (reused ones included) grouped by outcome, by experiment, eval and case."""
    where = Where()
    where.add(f"s.run_id IN ({', '.join(where.param(r) for r in run_ids)})")
    filter_experiments(where, experiment, "a.experiment_id")
    filter_evals(where, eval_prefix)
    columns = ", ".join(_GROUP_COLUMNS)
    source = "run_slots s JOIN attempts a ON a.id = s.attempt_id"
    return f"SELECT {columns}, COUNT(*) FROM {source}{where.sql()} GROUP BY {columns}", where.params


_GATE_OR_NONE: dict[str | None, GateState | None] = {None: None, **{g.value: g for g in GateState}}


def outcome_groups_from(rows: Iterable[tuple[Any, ...]]) -> list[OutcomeGroup]:
    """Typed groups from `outcome_groups_select`'s rows.

    Built with `tuple.__new__`: the NamedTuple's own `__new__` is a Python frame per group (20 000
    groups: a third of the time). SQLite hands each row new strings; the experiment ids and pass
    rules repeat, so each distinct one is kept once (the groups live to the end of a run: 20 000
    of them held 2 MiB of copies of "default" and "all").
    """
    new = tuple.__new__
    seen: dict[str, str] = {}  # an experiment id and a pass rule that spell alike are one string
    one = seen.setdefault
    return [
        new(OutcomeGroup, (one(e, e), v, _KIND[k], _STATE[st], _GATE_OR_NONE[g], sc, ms, uw, ps, _RELATION[rel],
                           rule if rule is None else one(rule, rule), n, case))
        for e, v, k, st, g, sc, ms, uw, ps, rel, rule, case, n in rows
    ]
