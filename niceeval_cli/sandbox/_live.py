"""Every workspace this process created and has not torn down yet, with a synchronous cleanup.

Teardown normally happens in the attempt's `finally`. This registry is the last line: the runner
calls `cleanup_all()` after an interrupt, and it also runs at interpreter exit, so no container,
process or temporary directory outlives the run even when an attempt never reached its teardown.
"""

from __future__ import annotations

import atexit
import threading
from collections.abc import Callable

__all__ = ["cleanup_all", "forget", "live_count", "remember"]

_lock = threading.Lock()
_live: dict[str, Callable[[], None]] = {}
_hooked = False


def remember(key: str, cleanup: Callable[[], None]) -> None:
    """Register `cleanup` (sync, idempotent, never raising) for the workspace `key`."""
    global _hooked
    with _lock:
        _live[key] = cleanup
        if not _hooked:
            atexit.register(cleanup_all)
            _hooked = True


def forget(key: str) -> None:
    with _lock:
        _live.pop(key, None)


def live_count() -> int:
    with _lock:
        return len(_live)


def cleanup_all() -> int:
    """Remove every workspace still registered; returns how many there were."""
    with _lock:
        pending = list(_live.items())
        _live.clear()
    for _key, cleanup in pending:
        try:
            cleanup()
        except Exception:  # pragma: no cover - cleanups swallow their own errors
            pass
    return len(pending)
