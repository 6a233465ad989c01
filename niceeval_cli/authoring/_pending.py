"""What `t.send(...)` returns before it is awaited.

`turn = t.send("hi")` without `await` used to hand eval code a bare coroutine, so `turn.message`
failed inside NiceEval with "'coroutine' object has no attribute 'message'". A `PendingTurn` is
awaited exactly like that coroutine; read as if it were the turn, it is an authoring error at the
eval's `t.send` line saying to await it — and a send never awaited at all is one too, when the
test ends (nothing was sent).
"""

from __future__ import annotations

from collections.abc import Coroutine, Generator
from types import TracebackType
from typing import Any, NoReturn

from ._errors import AuthoringError, SourceLocation
from ._turns import Turn

__all__ = ["PendingTurn", "never_awaited"]


class PendingTurn(Coroutine[Any, Any, Turn]):
    """`t.send(...)` / `session.send(...)`: `await` it for the Turn. A Coroutine itself, so
    `asyncio.create_task` and `gather` take it as they took the bare coroutine."""

    __slots__ = ("_call", "_coro", "_started", "_where")

    def __init__(self, coro: Coroutine[Any, Any, Turn], where: SourceLocation, call: str) -> None:
        self._coro = coro
        self._where = where
        self._call = call
        self._started = False

    def __await__(self) -> Generator[Any, None, Turn]:
        self._started = True
        return self._coro.__await__()

    def send(self, value: Any) -> Any:
        self._started = True
        return self._coro.send(value)

    def throw(self, typ: Any, val: Any = None, tb: TracebackType | None = None) -> Any:
        self._started = True
        return self._coro.throw(typ, val, tb) if val is not None or tb is not None else self._coro.throw(typ)

    def close(self) -> None:
        self._started = True
        self._coro.close()

    @property
    def awaited(self) -> bool:
        return self._started

    def _forgotten(self, doing: str) -> NoReturn:
        self._discard()
        raise AuthoringError(
            f"{self._call} was not awaited, so {doing}; write `turn = await {self._call}` "
            "(the test must be `async def`)", self._where,
        )

    def _discard(self) -> None:
        if not self._started:
            self._started = True
            self._coro.close()  # never sent: no "coroutine was never awaited" warning either

    def __getattr__(self, name: str) -> NoReturn:
        if name.startswith(("_", "cr_", "gi_")):  # dunders and coroutine internals probed by
            raise AttributeError(name)            # copy, pickle or asyncio: not the author's read
        self._forgotten(f"there is no turn to read .{name} from")

    def __bool__(self) -> NoReturn:
        self._forgotten("there is no turn to test")

    def __iter__(self) -> NoReturn:
        self._forgotten("there is no turn to iterate")

    def __getitem__(self, key: object) -> NoReturn:
        self._forgotten("there is no turn to index")

    def __repr__(self) -> str:
        return f"<{self._call} at {self._where}, not awaited>" if not self._started else f"<{self._call}>"


def never_awaited(pending: list[PendingTurn]) -> AuthoringError | None:
    """The error for the first send the test never awaited (each one is closed)."""
    forgotten = [p for p in pending if not p.awaited]
    for p in forgotten:
        p._discard()
    if not forgotten:
        return None
    first = forgotten[0]
    more = f" (and {len(forgotten) - 1} more)" if len(forgotten) > 1 else ""
    return AuthoringError(
        f"{first._call} was never awaited, so nothing was sent{more}; write `turn = await {first._call}` "
        "(the test must be `async def`)",
        first._where,
    )
