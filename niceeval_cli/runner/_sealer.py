"""Group commit: the attempts that finish in one turn of the event loop share one transaction.

One COMMIT per attempt was the largest single cost of a run of quick attempts. An attempt is
still sealed before anything is told of it (its worker awaits the seal), so a crash loses only
attempts nobody heard of, exactly as before. A batch that SQLite refuses is rolled back whole
and its attempts sealed one by one, so one bad attempt never costs the others, and each one's
error is what it would have been alone.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from .._errors import ExitCode, NiceEvalError
from .._records import AssertionResult, AttemptRecord
from ..store import SlotRecord, Store

#: At most this many attempts per transaction (a larger batch holds the write lock longer).
MAX_BATCH = 256
#: A batch waits for more attempts while the loop's turns bring some — at most MAX_TURNS turns
#: (microseconds each), and no more than QUIET_TURNS turns in a row that bring none: attempts
#: of quick evals finish a few turns apart, and an idle loop (waiting on a judge) flushes at once.
MAX_TURNS = 64
QUIET_TURNS = 3


class Sealer:
    def __init__(self, store: Store) -> None:
        self.store = store
        self._pending: list[tuple[AttemptRecord, Sequence[AssertionResult], SlotRecord, asyncio.Future[None]]] = []
        self._seen = 0  # pending attempts at the last turn
        self._turns = 0
        self._quiet = 0  # turns in a row that brought no attempt

    def seal(
        self, attempt: AttemptRecord, results: Sequence[AssertionResult], slot: SlotRecord
    ) -> asyncio.Future[None]:
        """A future done once the attempt is sealed (or failed with what sealing it raised)."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()
        self._pending.append((attempt, results, slot, done))
        if len(self._pending) == 1:
            self._seen, self._turns, self._quiet = 0, 0, 0
            loop.call_soon(self._turn)
        elif len(self._pending) >= MAX_BATCH:
            self.flush()
        return done

    def _turn(self) -> None:
        pending = len(self._pending)
        if not pending:
            return  # flushed already (a full batch)
        self._quiet = 0 if pending > self._seen else self._quiet + 1
        if self._quiet < QUIET_TURNS and self._turns < MAX_TURNS:
            self._seen, self._turns = pending, self._turns + 1
            asyncio.get_running_loop().call_soon(self._turn)
            return
        self.flush()

    def flush(self) -> None:
        batch, self._pending = self._pending, []
        if not batch:
            return
        if len(batch) > 1:
            try:
                self.store.seal_attempts([(a, r, s) for a, r, s, _ in batch])
            except Exception as exc:  # rolled back whole: each is sealed (or fails) alone below
                if _store_unavailable(exc):
                    _fail(batch, exc)  # locked past the busy timeout, disk full: one by one would wait again
                    return
            else:
                for *_, done in batch:
                    if not done.done():
                        done.set_result(None)
                return
        for at, (attempt, results, slot, done) in enumerate(batch):
            try:
                self.store.seal_attempt(attempt, results, slot)
            except Exception as exc:  # handed to the attempt's worker
                if _store_unavailable(exc):
                    _fail(batch[at:], exc)
                    return
                if not done.done():
                    done.set_exception(exc)
            else:
                if not done.done():
                    done.set_result(None)


def _store_unavailable(exc: Exception) -> bool:
    return isinstance(exc, NiceEvalError) and exc.exit_code == ExitCode.STORE_UNAVAILABLE


def _fail(batch: Sequence[tuple[object, object, object, asyncio.Future[None]]], exc: Exception) -> None:
    for *_, done in batch:
        if not done.done():
            done.set_exception(exc)
