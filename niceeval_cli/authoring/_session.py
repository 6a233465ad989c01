"""Sessions: independent conversations with the same adapter inside one Attempt.

`t.send` talks in the attempt's default session; `t.new_session(name)` opens another. The
adapter sees the session as `ctx.session` (`id`, `name`, and `state`, a dict it keeps per
session, e.g. the history), so one adapter can hold several conversations apart.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from ._agent_checks import ScopedChecks
from ._errors import AuthoringError
from ._turns import Turn

DEFAULT_SESSION = "default"

#: The test context's send: an awaitable of the Turn (a PendingTurn, which says "await it" when not)
Sender = Callable[["Session", str, dict[str, Any]], Awaitable[Turn]]


class Session:
    """One conversation: its id, optional name, the adapter's per-session state and its turns."""

    __slots__ = ("__weakref__", "_checks", "_send", "_turns", "id", "name", "state")

    def __init__(
        self, session_id: str, name: str | None, send: Sender | None = None,
        checks: Callable[[Session], ScopedChecks] | None = None,
    ) -> None:
        self.id = session_id
        self.name = name
        self.state: dict[str, Any] = {}
        self._turns: list[Turn] = []
        self._send: Sender | None = None
        self._checks: ScopedChecks | None = None
        if send is not None and checks is not None:
            self._bind(send, checks)

    def _bind(self, send: Sender, checks: Callable[[Session], ScopedChecks]) -> None:
        """Attach the test context (the default session exists before it: `create` sees it)."""
        self._send = send
        self._checks = checks(self)

    def _detach(self) -> None:
        """Its attempt ended: let go of the test context (see `TestContext._release`)."""
        self._send = _ended
        if self._checks is not None:
            self._checks.close()

    def _bound(self) -> ScopedChecks:
        if self._checks is None:
            raise RuntimeError(f"session {self.id!r} is not attached to a test context yet")
        return self._checks

    def send(self, message: str, **options: Any) -> Awaitable[Turn]:
        """Send one turn in this session: `await` it."""
        if self._send is None:
            raise RuntimeError(f"session {self.id!r} is not attached to a test context yet")
        return self._send(self, message, options)

    @property
    def turns(self) -> tuple[Turn, ...]:
        """This session's turns, in order."""
        return tuple(self._turns)

    def _record(self, turn: Turn) -> None:
        self._turns.append(turn)

    # -- scoped agent assertions (the scope: this session's turns so far) -----------------------
    def succeeded(self) -> Any:
        return self._bound().succeeded()

    def called_tool(self, match: Any, count: Any = None) -> Any:
        return self._bound().called_tool(match, count)

    def not_called_tool(self, match: Any) -> Any:
        return self._bound().not_called_tool(match)

    def tool_order(self, matches: Any) -> Any:
        return self._bound().tool_order(matches)

    def max_tool_calls(self, n: int) -> Any:
        return self._bound().max_tool_calls(n)

    def no_failed_actions(self) -> Any:
        return self._bound().no_failed_actions()

    def __repr__(self) -> str:
        shown = f" {self.name!r}" if self.name is not None else ""
        return f"<Session {self.id}{shown}: {len(self._turns)} turn(s)>"


def _ended(session: Session, message: str, options: dict[str, Any]) -> Awaitable[Turn]:
    raise AuthoringError(f"session {session.id!r}.send(...) was called after its attempt ended (it was sealed "
                         "already); send inside the test, before it returns")


__all__ = ["DEFAULT_SESSION", "Session"]
