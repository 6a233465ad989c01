"""The built-in `python` adapter: `t.send(message)` calls a Python function of the project.

    [experiments.local]
    adapter = "python"
    [experiments.local.options]
    callable = "myapp.agent:reply"        # module:attr, imported with the project root on sys.path
    kwargs = { temperature = 0 }          # optional keyword arguments for every call

The callable takes the message (and keyword options, if its signature accepts them: the
`kwargs` table merged with `t.send(message, **options)`; a parameter named `session` receives the
session, with its `.id`, `.name` and per-session `.state` dict) and returns text, a `Turn`, or a
dict `{"message": str, "events"?: [...], "status"?: str, "usage"?: {...}, "data"?: any}` (the
event protocol, docs/adapters.md). It may be sync or async; a sync callable runs in a worker
thread so a slow one does not stall other attempts.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import Field, field_validator

from .._project_sources import reference_files
from ..authoring import Adapter, AdapterContext, Turn
from ._events import OBSERVES_EVENTS
from ._options import AdapterOptions, load_error, parse_options, reply_to_turn

VERSION = "1"


class PythonOptions(AdapterOptions):
    callable: str = Field(description='"module:attr" of the function to call')
    kwargs: dict[str, Any] = Field(default_factory=dict)

    @field_validator("callable")
    @classmethod
    def _module_attr(cls, value: str) -> str:
        module, sep, attr = value.partition(":")
        if not sep or not module or not attr:
            raise ValueError(f'expected "module:attr" (e.g. "myapp.agent:reply"), got {value!r}')
        return value


def _resolve(reference: str) -> Callable[..., Any]:
    module_name, _, attr = reference.partition(":")
    value: Any = importlib.import_module(module_name)
    for part in attr.split("."):
        value = getattr(value, part)
    if not callable(value):
        raise TypeError(f"{reference} is a {type(value).__name__}, not a function")
    return value  # type: ignore[no-any-return]


def _keyword_plan(fn: Callable[..., Any]) -> tuple[bool, frozenset[str]]:
    """(accepts **kwargs, the names it accepts as keywords besides the message)."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):  # builtins without a signature: pass everything
        return True, frozenset()
    var_kw = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params)
    named = frozenset(
        p.name for p in params[1:]
        if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    )
    return var_kw, named


class PythonAdapter(Adapter):
    """Calls one project function per `t.send`."""

    remote = False  # the callable runs here: its module (with its project imports) is its identity

    def __init__(self, options: PythonOptions, fn: Callable[..., Any]) -> None:
        super().__init__("python", send=self._send_message, version=VERSION, observes=OBSERVES_EVENTS)
        self.sut_files = reference_files(options.callable)
        self.options = options
        self.fn = fn
        self.secrets: list[str] = []
        self._var_kw, self._named = _keyword_plan(fn)

    def refused(self, names: Iterable[str]) -> list[str]:
        """The keyword names its callable does not accept."""
        return [] if self._var_kw else sorted(k for k in names if k not in self._named)

    def _keywords(self, send_options: Mapping[str, Any]) -> dict[str, Any]:
        given = {**self.options.kwargs, **send_options}
        refused = self.refused(given)
        if refused:
            raise TypeError(
                f"{self.options.callable} does not accept keyword option(s) {', '.join(refused)}; add them "
                "(or **options) to its signature, or drop them from kwargs / t.send(...)"
            )
        return given

    async def _send_message(self, ctx: AdapterContext, message: str, **send_options: Any) -> Turn:
        keywords = self._keywords(send_options)
        if "session" in self._named and "session" not in keywords:
            keywords["session"] = ctx.session
        if "sandbox" not in keywords and ("sandbox" in self._named or (self._var_kw and ctx.sandbox is not None)):
            keywords["sandbox"] = ctx.sandbox  # the attempt's workspace (docs/sandbox.md)
        if inspect.iscoroutinefunction(self.fn):
            reply = await self.fn(message, **keywords)
        else:
            reply = await asyncio.to_thread(self.fn, message, **keywords)
            if inspect.isawaitable(reply):
                reply = await reply
        return reply_to_turn(message, reply, self.options.callable, OBSERVES_EVENTS)


def build(options: Mapping[str, Any], experiment_id: str, root: Path) -> PythonAdapter:
    """The `python` adapter of one experiment (the callable is imported now: mistakes exit 2)."""
    parsed = parse_options(PythonOptions, options, experiment_id, "python")
    try:
        fn = _resolve(parsed.callable)
    except Exception as exc:
        raise load_error(
            experiment_id, "python", "callable",
            f"cannot use {parsed.callable!r} ({type(exc).__name__}: {exc}); it must name a function of "
            "a module importable from the project root",
        ) from None
    adapter = PythonAdapter(parsed, fn)
    refused = adapter.refused(parsed.kwargs)
    if refused:  # every call would refuse them: one configuration error, not one per attempt
        raise load_error(
            experiment_id, "python", "kwargs",
            f"{parsed.callable} does not accept keyword option(s) {', '.join(refused)}; add them (or **options) "
            "to its signature, or drop them from kwargs",
        )
    return adapter
