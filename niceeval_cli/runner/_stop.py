"""Ctrl-C and SIGTERM during a run: a stop request the driver checks between steps."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from types import FrameType
from typing import Any

from .._interrupt import INTERRUPTED, MESSAGE


class Stop:
    """Ctrl-C / SIGTERM: installed before the run's first store write, so a signal during
    start-up or the reuse bookkeeping still ends the run `interrupted` (exit 130)."""

    def __init__(self) -> None:
        self.requested = False
        self.inflight: set[asyncio.Future[Any]] = set()
        self._installed: dict[signal.Signals, Any] = {}
        self._ours: dict[signal.Signals, Any] = {}  # what getsignal says while ours is installed
        self._unheard = False  # a signal arrived that the loop has not handed to `__call__` yet

    def __call__(self) -> None:
        self._unheard = False
        self.requested = True
        for task in list(self.inflight):
            task.cancel()

    def install(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                previous = signal.getsignal(sig)
                if previous == signal.SIG_IGN:  # started with it ignored (a script's background job)
                    continue
                self._take(loop, sig)
                self._installed[sig] = previous
            except (NotImplementedError, RuntimeError, ValueError):  # pragma: no cover - non-main thread
                pass

    def reclaim(self) -> None:
        """Install the handlers again where code the run ran replaced them: eval code runs in this
        process, and one `signal.signal(SIGINT, SIG_IGN)` left Ctrl-C and SIGTERM without effect
        for the rest of the run. Called as each attempt ends."""
        for sig, ours in self._ours.items():
            if signal.getsignal(sig) != ours:
                with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                    self._take(asyncio.get_running_loop(), sig)

    def _take(self, loop: asyncio.AbstractEventLoop, sig: signal.Signals) -> None:
        """asyncio's handler (the loop calls `self` when it reads the signal), behind a Python
        one that notes the signal first: the C handler wakes the loop whatever Python handler is
        set, so asyncio's goes on working."""
        loop.add_signal_handler(sig, self)
        signal.signal(sig, self._noted)
        self._ours[sig] = self._noted

    def _noted(self, signum: int, frame: FrameType | None) -> None:
        """A second signal while the loop has not yet taken the first: the loop is held by code
        that does not return (a plain `def` test spinning in `while True`, which no timeout can
        cut off), and nothing else would end the process. It ends now, status 130, as a second
        Ctrl-C does once a command is done; what was sealed is kept."""
        if self._unheard:
            with contextlib.suppress(OSError):
                os.write(2, f"{MESSAGE}\n".encode())
            os._exit(INTERRUPTED)
        self._unheard = True

    def uninstall(self) -> None:
        loop = asyncio.get_running_loop()
        for sig, previous in self._installed.items():
            loop.remove_signal_handler(sig)
            # asyncio leaves SIGTERM at SIG_DFL (the process would die by it, rc -15, after the
            # run had ended): the handler from before the run takes it again (exit 130).
            if signal.getsignal(sig) == signal.SIG_DFL and previous not in (None, signal.SIG_DFL):
                signal.signal(sig, previous)
        self._installed.clear()
        self._ours.clear()

    async def settle(self) -> bool:
        """Let a signal that arrived during synchronous work reach its handler; True if one did."""
        for _ in range(3):
            await asyncio.sleep(0)
        return self.requested


__all__ = ["Stop"]
