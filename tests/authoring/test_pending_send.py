"""`t.send(...)` before it is awaited (authoring/_pending.py): awaited it is the turn, read
without `await` it is an authoring error at the call's line, and asyncio takes it as a coroutine."""

from __future__ import annotations

import asyncio

import pytest

from niceeval_cli.authoring import AuthoringError
from niceeval_cli.authoring._errors import SourceLocation
from niceeval_cli.authoring._pending import PendingTurn, never_awaited

WHERE = SourceLocation("evals/ask.py", 7)


async def _turn() -> str:
    await asyncio.sleep(0)
    return "the turn"


def _pending() -> PendingTurn:
    return PendingTurn(_turn(), WHERE, "t.send(...)")  # type: ignore[arg-type]


def test_awaited_it_is_the_turn_and_asyncio_takes_it_as_a_coroutine() -> None:
    async def main() -> list[object]:
        return [await _pending(), await asyncio.create_task(_pending()), *await asyncio.gather(_pending())]

    assert asyncio.run(main()) == ["the turn"] * 3


def test_reading_it_without_await_says_to_await_it_at_the_call() -> None:
    with pytest.raises(AuthoringError) as caught:
        _ = _pending().message
    assert str(caught.value).startswith("evals/ask.py:7: t.send(...) was not awaited")
    assert "await t.send(...)" in str(caught.value)


def test_a_send_never_awaited_is_reported_once_and_closed() -> None:
    pending = [_pending(), _pending()]
    error = never_awaited(pending)
    assert error is not None and "never awaited, so nothing was sent (and 1 more)" in str(error)
    assert never_awaited(pending) is None  # closed: reported once
