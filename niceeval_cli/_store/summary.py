"""A run's attempts grouped by outcome: what the headers of `view` and the run summary count.

One GROUP BY query instead of one typed row per attempt, so the header of a run with 100 000
attempts costs a few hundred milliseconds (benchmarks/view_large.py). Attempts with the same
experiment, eval, state, gate and score columns collapse into one group with a count; the
readers expand them where `outcomes` needs one item per attempt.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from .._states import AttemptState, EvalKind, GateState, Relation
from .errors import translated
from .queries import Names, Where, attempts_source, filter_evals, filter_experiments

if TYPE_CHECKING:
    from .store import Store

_KIND = {k.value: k for k in EvalKind}
_STATE = {s.value: s for s in AttemptState}
_GATE = {g.value: g for g in GateState}
_RELATION = {r.value: r for r in Relation}

_GROUP_COLUMNS = (
    "s.experiment_id", "s.eval_id", "a.kind", "a.state", "a.gate", "a.score", "a.max_score",
    "a.unavailable_weight", "a.partial_score", "COALESCE(s.relation, 'origin')", "s.pass_rule",
)


class OutcomeGroup(NamedTuple):
    """`count` attempts of one (experiment, eval) that share every outcome column.

    A NamedTuple, not a dataclass: a large run has tens of thousands of groups, and tuples are
    built in C.
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


def outcome_groups(
    store: Store, run_id: str, *, experiment: Names = None, eval_prefix: Names = None
) -> list[OutcomeGroup]:
    """The run's attempts (reused ones included) grouped by outcome, by experiment and eval."""
    where = Where()
    source = attempts_source(where, run_id)
    filter_experiments(where, experiment, "a.experiment_id")
    filter_evals(where, eval_prefix)
    columns = ", ".join(_GROUP_COLUMNS)
    sql = f"SELECT {columns}, COUNT(*) FROM {source}{where.sql()} GROUP BY {columns}"
    # The package's own connection (sibling module of Store): one raw cursor, no per-row dicts.
    with translated(store.path, "Counting a run's attempts"):
        cursor = store._db.conn.execute(sql, where.params)
        return [
            OutcomeGroup(e, v, _KIND[k], _STATE[st], None if g is None else _GATE[g], sc, ms, uw, ps,
                         _RELATION[rel], rule, n)
            for e, v, k, st, g, sc, ms, uw, ps, rel, rule, n in cursor
        ]
