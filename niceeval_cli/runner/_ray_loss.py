"""Which attempt a lost Ray worker died of (scale.md, "Lost workers").

A Ray worker runs many attempts at once on one event loop, so when its process dies every
attempt in flight on it fails together. Only one of them — at most — is "the one that died":
the attempt whose code was running when the process went. The others are innocent and are run
again once; the one that died is sealed `errored (executor-lost)` (run again only with
`--retry-lost`, since an attempt may have side effects).

How the one that died is told apart:

- A watchdog thread in each worker looks at the event loop's thread every `WATCH_EVERY_S`. When
  the same attempt's test or adapter step is on the loop's stack at two looks in a row (it is
  holding the loop: a plain `def` test, a blocking call), it tells the run's `Ledger` actor,
  which outlives the worker. When the worker is lost, the attempt the ledger names is the one.
- Nobody holding the loop (the process died during an `await`, in a thread, or its node went):
  with a single attempt in flight on the worker, that attempt is the one. With several, which
  one cannot be told: each is run again once, alone on a fresh worker of its own; one lost
  again while alone is the one that dies. (An attempt that killed its worker once and not
  again then ends with its second run's result, and a note saying so.)
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from enum import Enum
from typing import Any

__all__ = ["WATCH_EVERY_S", "Blame", "Ledger", "LoopWatch", "Loss", "attempt_name", "blame"]

#: How often a worker's watchdog looks at what runs on its event loop.
WATCH_EVERY_S = 0.05


class Ledger:
    """The actor body that remembers, per worker, the attempt holding its loop (a few names)."""

    def __init__(self) -> None:
        self._holding: dict[str, str | None] = {}

    def holding(self, worker: str, attempt: str | None) -> None:
        self._holding[worker] = attempt

    def holder(self, worker: str) -> str | None:
        return self._holding.get(worker)

    def forget(self, worker: str) -> None:
        self._holding.pop(worker, None)


class LoopWatch:
    """A daemon thread of a worker: names the attempt holding the event loop's thread (its
    `_body` frame is on the stack at two looks in a row), via `tell(attempt or None)`."""

    def __init__(self, loop_thread: int, body_code: Any, tell: Callable[[str | None], None]) -> None:
        self._loop_thread = loop_thread
        self._body_code = body_code
        self._tell = tell
        self._thread = threading.Thread(target=self._watch, name="niceeval-loop-watch", daemon=True)
        self._thread.start()

    def _on_loop(self) -> str | None:
        frame = sys._current_frames().get(self._loop_thread)
        while frame is not None:
            if frame.f_code is self._body_code:
                spec = frame.f_locals.get("spec")
                key = getattr(spec, "key", None)
                return attempt_name(key) if key is not None else None
            frame = frame.f_back
        return None

    def _watch(self) -> None:
        seen: str | None = None
        told: str | None = None
        while True:
            time.sleep(WATCH_EVERY_S)
            try:
                now = self._on_loop()
                holder = now if now is not None and now == seen else None
                seen = now
                if holder != told:
                    self._tell(holder)
                    told = holder
            except Exception:  # pragma: no cover - the watchdog must never cost the worker
                pass


def attempt_name(key: tuple[str, str, int]) -> str:
    experiment, eval_id, ordinal = key
    return f"{experiment} · {eval_id}#{ordinal}"


class Blame(Enum):
    """What a lost attempt is, once its worker died."""

    DIED = "died"  # it is the one that died: sealed executor-lost (or retried with --retry-lost)
    INNOCENT = "innocent"  # another attempt held the loop: run it again once
    UNKNOWN = "unknown"  # several in flight, nobody held the loop: run it again once, alone


@dataclass(frozen=True)
class Loss:
    """One worker's death as the driver saw it: who was in flight, who held the loop."""

    in_flight: frozenset[str]
    holder: str | None


def blame(attempt: str, in_flight: Collection[str], holder: str | None) -> Blame:
    """The rule of the module docstring, for one attempt that was in flight on a lost worker."""
    if holder is not None:
        return Blame.DIED if holder == attempt else Blame.INNOCENT
    others = set(in_flight) - {attempt}
    return Blame.UNKNOWN if others else Blame.DIED
