"""The results store (cli.md, "Store"): SQLite through sqlite-utils; all reads and writes.

The one door: everything outside this package imports from `niceeval_cli.store` only, and
reads and writes through `Store`'s public methods. `Store` (store.py) is thin and hands each call,
over a `Db` (db.py), to the module of its job: `sealing` (every write, the seal rows),
`references` (run, group and attempt ids and prefixes), `groups` (shard groups: rows, verdicts),
`summary` (outcome groups, counted passed evals), `targets` (`query`'s rows), `reads` (a run's
and an attempt's typed rows). Beside them: `schema` (tables, triggers), `migrations` (older stores upgraded), `connect`
(opening, locking), `queries` (reader SQL), `rows` (typed rows), `sanitize` (storable text and
integers), `owner` (who runs a `running` run), `history` (an eval's latest attempts, by
identity), `merge` (other stores merged in), `labels` (human labels), `agreement` (judge
decisions paired and counted), `views` (plain-SQL views for SQLite tools), `errors`.
"""

from __future__ import annotations

from .agreement import JudgeIdentity, PairCounts
from .errors import StoreError, StoreUnavailable
from .groups import GroupOutcome, RunRead
from .history import EvalRef, LatestAttempt
from .labels import PASS_FAIL_SCALE, LabelInput, LabelTarget, label_time
from .merge import MergeConflict, MergeResult
from .queries import ASSERTION_STATE_FILTERS, ATTEMPT_STATE_FILTERS, RUN_STATUS_FILTERS
from .rows import AssertionRow, AttemptRow, PlanSlot, RunRow, SlotRecord, SlotRow
from .schema import SCHEMA_VERSION
from .store import Store
from .summary import OutcomeGroup, PassedEvals, RunOutcomeRows, count_passed_evals
from .targets import ALL_RUNS, QUERY_TARGETS, QueryTarget

__all__ = [
    "ALL_RUNS",
    "ASSERTION_STATE_FILTERS",
    "ATTEMPT_STATE_FILTERS",
    "PASS_FAIL_SCALE",
    "QUERY_TARGETS",
    "RUN_STATUS_FILTERS",
    "SCHEMA_VERSION",
    "AssertionRow",
    "AttemptRow",
    "EvalRef",
    "GroupOutcome",
    "JudgeIdentity",
    "LabelInput",
    "LabelTarget",
    "LatestAttempt",
    "MergeConflict",
    "MergeResult",
    "OutcomeGroup",
    "PairCounts",
    "PassedEvals",
    "PlanSlot",
    "QueryTarget",
    "RunOutcomeRows",
    "RunRead",
    "RunRow",
    "SlotRecord",
    "SlotRow",
    "Store",
    "StoreError",
    "StoreUnavailable",
    "count_passed_evals",
    "label_time",
]
