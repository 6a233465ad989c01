"""The results store, split into small modules; import it as `niceeval_cli.store`."""

from __future__ import annotations

from .._imports import import_without

import_without("sqlite_utils", "numpy")

from .errors import StoreError
from .queries import ASSERTION_STATE_FILTERS, ATTEMPT_STATE_FILTERS, RUN_STATUS_FILTERS
from .rows import AssertionRow, AttemptRow, RunRow, SlotRecord, SlotRow
from .schema import SCHEMA_VERSION
from .store import ALL_RUNS, QueryTarget, Store

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
