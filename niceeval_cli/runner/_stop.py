"""Ctrl-C and SIGTERM during a run: a stop request the driver checks between steps."""

from __future__ import annotations

import asyncio
import signal
from typing import Any


class Stop:
    """Ctrl-C / SIGTERM: installed before the run's first store write, so a signal during
    start-up or the reuse bookkeeping still ends the run `interrupted` (exit 130)."""

    def __init__(self) -> None:
        self.requested = False
        self.inflight: set[asyncio.Future[Any]] = set()
        self._installed: list[signal.Signals] = []

    def __call__(self) -> None:
        self.requested = True
        for task in list(self.inflight):
            task.cancel()

    def install(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                loop.add_signal_handler(sig, self)
                self._installed.append(sig)
            except (NotImplementedError, RuntimeError, ValueError):  # pragma: no cover - non-main thread
                pass

    def uninstall(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in self._installed:
            loop.remove_signal_handler(sig)
        self._installed.clear()

    async def settle(self) -> bool:
        """Let a signal that arrived during synchronous work reach its handler; True if one did."""
        for _ in range(3):
            await asyncio.sleep(0)
        return self.requested


__all__ = ["Stop"]
