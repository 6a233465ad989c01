"""The results store (cli.md, "Store"): SQLite through sqlite-utils; all reads and writes.

The implementation lives in `niceeval_cli._store` (small modules); this is its public face.
"""

from __future__ import annotations

from ._store import (
    ALL_RUNS,
    ASSERTION_STATE_FILTERS,
    ATTEMPT_STATE_FILTERS,
    RUN_STATUS_FILTERS,
    SCHEMA_VERSION,
    AssertionRow,
    AttemptRow,
    QueryTarget,
    RunRow,
    SlotRecord,
    SlotRow,
    Store,
    StoreError,
)

__all__ = [
    "ALL_RUNS",
    "ASSERTION_STATE_FILTERS",
    "ATTEMPT_STATE_FILTERS",
    "RUN_STATUS_FILTERS",
    "SCHEMA_VERSION",
    "AssertionRow",
    "AttemptRow",
    "QueryTarget",
    "RunRow",
    "SlotRecord",
    "SlotRow",
    "Store",
    "StoreError",
]
