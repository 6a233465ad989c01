"""A running run's heartbeat: its owner writes the time every few seconds (`run_heartbeats`).

What lets a program without NiceEval tell a run whose process is gone (view `run_status`,
views.py): a `running` run whose beat is older than HEARTBEAT_STALE_S reads `abandoned`. NiceEval's
own readers know sooner on the owner's host (owner.py checks the process).

The first beat is written with the run's row; the next ones by a timer on the event loop that
began the run (where the run's seals are written too): no thread and no second connection, so a
run's memory is what it was. A beat is best effort: one that cannot be written soon (another
writer holds the lock, the disk is full) is skipped, never an error of the run.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import TYPE_CHECKING

from .errors import StoreError
from .views import HEARTBEAT_INTERVAL_S

if TYPE_CHECKING:
    import asyncio

__all__ = ["BEAT_SQL", "Heartbeats"]

BEAT_SQL = (
    "INSERT INTO run_heartbeats (run_id, beat_at) VALUES (?, ?) "
    "ON CONFLICT (run_id) DO UPDATE SET beat_at = excluded.beat_at"
)


class Heartbeats:
    """The beating runs of one writable Store; `beat(run_id)` writes one beat."""

    def __init__(self, beat: Callable[[str], None], interval_s: float = HEARTBEAT_INTERVAL_S) -> None:
        self._beat = beat
        self._interval_s = interval_s
        self._timers: dict[str, asyncio.TimerHandle] = {}

    def start(self, run_id: str) -> None:
        """Beat every interval on the running event loop; begun outside one (a script using the
        store), the beat written with the run stands alone. asyncio is imported here: a command that
        only reads the store (view, query, report) never loads it."""
        import asyncio

        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        if run_id not in self._timers:
            self._schedule(loop, run_id)

    def _schedule(self, loop: asyncio.AbstractEventLoop, run_id: str) -> None:
        self._timers[run_id] = loop.call_later(self._interval_s, self._tick, loop, run_id)

    def _tick(self, loop: asyncio.AbstractEventLoop, run_id: str) -> None:
        if run_id not in self._timers:
            return
        try:
            self._beat(run_id)
        except (StoreError, sqlite3.Error):
            pass  # a beat is best effort: the next one tries again
        if run_id in self._timers and not loop.is_closed():
            self._schedule(loop, run_id)

    def stop(self, run_id: str) -> None:
        timer = self._timers.pop(run_id, None)
        if timer is not None:
            timer.cancel()

    def stop_all(self) -> None:
        for run_id in list(self._timers):
            self.stop(run_id)
