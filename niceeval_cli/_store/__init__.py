"""The results store, split into small modules; import it as `niceeval_cli.store`."""

from __future__ import annotations

import sys


def _import_sqlite_utils_without_numpy() -> None:
    """sqlite-utils imports numpy (when installed) only to adapt numpy values on insert; the store
    never inserts any, and numpy's import costs ~60 ms of every command's start-up."""
    if "sqlite_utils" in sys.modules or "numpy" in sys.modules:
        return
    sys.modules["numpy"] = None  # type: ignore[assignment]
    try:
        import sqlite_utils  # noqa: F401
    finally:
        del sys.modules["numpy"]


_import_sqlite_utils_without_numpy()

from .errors import StoreError  # noqa: E402
from .queries import ASSERTION_STATE_FILTERS, ATTEMPT_STATE_FILTERS, RUN_STATUS_FILTERS  # noqa: E402
from .rows import AssertionRow, AttemptRow, RunRow, SlotRecord, SlotRow  # noqa: E402
from .schema import SCHEMA_VERSION  # noqa: E402
from .store import ALL_RUNS, QueryTarget, Store  # noqa: E402

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
