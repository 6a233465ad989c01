"""A running run's heartbeat: its owner writes the time every few seconds (`run_heartbeats`).

What lets a program without NiceEval tell a run whose process is gone (view `run_status`,
views.py): a `running` run whose beat is older than HEARTBEAT_STALE_S reads `abandoned`. NiceEval's
own readers know sooner on the owner's host (owner.py checks the process). A beat is best effort:
a beat that cannot be written (the store busy, the disk full) is skipped, never an error of the run.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from pathlib import Path

from .._ids import utc_now_iso
from .views import HEARTBEAT_INTERVAL_S

__all__ = ["BEAT_SQL", "Heartbeats"]

BEAT_SQL = (
    "INSERT INTO run_heartbeats (run_id, beat_at) VALUES (?, ?) "
    "ON CONFLICT (run_id) DO UPDATE SET beat_at = excluded.beat_at"
)


def _open(path: Path, interval_s: float) -> sqlite3.Connection:
    """The store as it is (`mode=rw`: a store removed during the run is not created again empty);
    a beat waits for another writer's lock up to one interval, then is skipped."""
    conn = sqlite3.connect(path.resolve().as_uri() + "?mode=rw", uri=True, isolation_level=None)
    conn.execute(f"PRAGMA busy_timeout = {int(interval_s * 1000)}")
    return conn


class _Beating:
    """One run's beating thread, on a connection of its own (made and closed in that thread)."""

    def __init__(self, path: Path, run_id: str, interval_s: float) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._loop, args=(path, run_id, interval_s), name=f"niceeval-heartbeat-{run_id}", daemon=True
        )
        self._thread.start()

    def _loop(self, path: Path, run_id: str, interval_s: float) -> None:
        conn: sqlite3.Connection | None = None
        try:
            while not self._stop.wait(interval_s):
                try:
                    if conn is None:
                        conn = _open(path, interval_s)
                    conn.execute(BEAT_SQL, [run_id, utc_now_iso()])  # autocommit: one short write
                except (sqlite3.Error, OSError):
                    continue  # the next beat tries again
        finally:
            if conn is not None:
                with contextlib.suppress(sqlite3.Error):
                    conn.close()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


class Heartbeats:
    """The beating runs of one writable Store (the first beat is written with the run's row)."""

    def __init__(self, path: Path, interval_s: float = HEARTBEAT_INTERVAL_S) -> None:
        self._path = path
        self._interval_s = interval_s
        self._beating: dict[str, _Beating] = {}

    def start(self, run_id: str) -> None:
        if run_id not in self._beating:
            self._beating[run_id] = _Beating(self._path, run_id, self._interval_s)

    def stop(self, run_id: str) -> None:
        beating = self._beating.pop(run_id, None)
        if beating is not None:
            beating.stop()

    def stop_all(self) -> None:
        for run_id in list(self._beating):
            self.stop(run_id)
