"""`define_adapter`: the boundary to the system under test."""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeAlias, overload

from .._states import EvalKind
from ._errors import AuthoringError
from ._turns import Turn, check_observed, turn_from_reply
from ._usage import UsageMeter

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from ._definition import EvalDefinition, TestFunction
    from ._options import EvalOptions

#: Members of the test context an adapter assertion may not shadow.
RESERVED_NAMES = frozenset({
    "check", "score", "send", "facts", "usage", "elapsed_ms", "experiment", "group",
    "closed_qa", "factuality", "summarizes",
    "turns", "new_session", "succeeded", "called_tool", "not_called_tool", "tool_order",
    "max_tool_calls", "no_failed_actions", "case_id", "sandbox",
})


@dataclass(frozen=True)
class ExperimentInfo:
    """The resolved experiment an Attempt runs under (read-only)."""

    id: str
    model: str | None = None
    options: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))


class InstalledVersionError(RuntimeError):
    """An adapter's `installed_version` could not be read (the message says why, for the user)."""


@dataclass
class AdapterContext:
    """What `create` and `send` receive for one Attempt."""

    eval_id: str
    attempt: int
    experiment: ExperimentInfo
    deadline: float | None  # time.monotonic() seconds, or None
    _usage: UsageMeter
    logger: logging.Logger = field(default_factory=lambda: logging.getLogger("niceeval.adapter"))
    session: Any = None  # the Session a `send` talks in (`.id`, `.name`, `.state`)
    sandbox: Any = None  # the attempt's workspace (files and commands), None without one (docs/sandbox.md)
    notes: list[str] = field(default_factory=list)  # what `note` said, sealed into the attempt's notes

    def record_usage(self, input_tokens: int | None = None, output_tokens: int | None = None) -> None:
        self._usage.record(input_tokens, output_tokens)

    def note(self, text: str) -> None:
        """Say something about this Attempt that its results do not show (e.g. "POST ... answered
        HTTP 429; retried after 1.0 s"): kept in the attempt's notes (`view @ATTEMPT`), redacted."""
        self.notes.append(str(text))


async def _call(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Await an async callable; run a plain one in a worker thread, so that a slow or blocking
    adapter neither stalls the other attempts nor escapes the attempt's timeout."""
    call_method = type(fn).__call__ if not inspect.isfunction(fn) else None
    if inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(call_method):
        return await fn(*args, **kwargs)
    result = await asyncio.to_thread(fn, *args, **kwargs)
    if inspect.isawaitable(result):  # a plain function that returned a coroutine
        result = await result
    return result


class Adapter:
    """An adapter: `create` observes the system, `send` talks to it, `assertions` add domain checks.

    The runner reads three more members of every adapter: `secrets` (values it read from the
    environment, never stored or printed), `preflight()` (checked once before dispatch) and
    `aclose()` (after the run).
    """

    #: Values never stored or printed (keys read from the environment); redacted everywhere.
    secrets: Sequence[str] = ()
    #: The URL of the system under test when the adapter knows it (shown with a failed preflight).
    endpoint: str | None = None
    #: It calls the experiment's `model`: an experiment without one is a configuration error found
    #: while planning (exit 2), not one errored attempt per slot.
    requires_model: bool = False
    #: The experiment's model, set while planning for an adapter that `requires_model`: its
    #: preflight checks that the endpoint serves it.
    preflight_model: str | None = None
    #: Project files the system under test is made of (the callable's module, a tools module, a
    #: script in argv): hashed into the fingerprint with the project modules they import.
    sut_files: Sequence[Path] = ()
    #: True when what answers `send` may live behind the network, out of NiceEval's sight (the
    #: http and openai-chat adapters, any custom adapter): without `version_command` / `inputs`
    #: such an experiment is identified by its configuration only (config.md).
    remote: bool = True

    def installed_version(self) -> Mapping[str, str] | None:
        """What a program this adapter runs from outside the project (a coding agent's CLI) says of
        its version (plain strings), read once per run while planning: it joins the system under test's identity, so
        upgrading the program runs its evals again instead of reusing what the old one produced
        (config.md). None: nothing outside the project to identify. Raises `InstalledVersionError`
        when the program cannot tell: its slots are then never reused, and the adapter's preflight
        should fail with the same cause."""
        return None

    def __init__(
        self,
        name: str,
        create: Callable[..., Any] | None = None,
        send: Callable[..., Any] | None = None,
        assertions: Callable[[Callable[..., Any]], Mapping[str, Callable[..., Any]]] | None = None,
        version: str | None = None,
        preflight: Callable[[], Any] | None = None,
        observes: Any = (),
    ) -> None:
        if not isinstance(name, str) or not name:
            raise AuthoringError("define_adapter(name=...) needs a non-empty name")
        if preflight is not None and not callable(preflight):
            raise AuthoringError(f"define_adapter(preflight=...) must be a function, got {preflight!r}")
        self.name = name
        self.version = version
        try:
            self.observes = check_observed(observes, f"adapter {name!r}: observes")
        except (TypeError, ValueError) as exc:
            raise AuthoringError(str(exc)) from None
        self._create = create
        self._send = send
        self._assertions = assertions
        self._preflight = preflight
        if assertions is not None:
            _probe_assertion_names(self)

    @property
    def identity(self) -> dict[str, Any]:
        return {"name": self.name, "version": self.version}

    @property
    def has_send(self) -> bool:
        return self._send is not None

    async def create(self, ctx: AdapterContext) -> Any:
        if ctx.session is None:  # `create` sees the attempt's default session too
            from ._session import DEFAULT_SESSION, Session

            ctx.session = Session(DEFAULT_SESSION, None)
        if self._create is None:
            return None
        return await _call(self._create, ctx)

    async def send(self, ctx: AdapterContext, message: str, **options: Any) -> Turn:
        if self._send is None:
            raise AuthoringError(f"adapter {self.name!r} does not implement send; t.send needs one that does")
        reply = await _call(self._send, ctx, message, **options)
        if isinstance(reply, str):
            return Turn(input=message, message=reply, observed=frozenset())  # text observes nothing
        if isinstance(reply, Turn):
            return reply
        if isinstance(reply, Mapping):
            try:
                return turn_from_reply(message, reply, self.observes)
            except ValueError as exc:
                raise TypeError(f"adapter {self.name!r} send returned a dict: {exc}") from None
        raise TypeError(f"adapter {self.name!r} send returned {type(reply).__name__}; expected Turn or str")

    def assertion_methods(self, check: Callable[..., Any]) -> Mapping[str, Callable[..., Any]]:
        if self._assertions is None:
            return {}
        methods = self._assertions(check)
        _validate_names(self.name, methods)
        return methods

    async def preflight(self) -> str | None:
        """Check once, before any attempt is dispatched, that the system under test is reachable:
        None when it is (or nothing can be checked), else a one-line cause naming the URL."""
        if self._preflight is None:
            return None
        cause = await _call(self._preflight)
        if cause is None or cause is True:
            return None
        if cause is False:
            return f"the preflight of adapter {self.name!r} failed"
        return str(cause)

    async def aclose(self) -> None:
        """Release resources (built-in adapters override this)."""

    @overload
    def define_eval(self, test: TestFunction, **options: Unpack[EvalOptions]) -> EvalDefinition: ...
    @overload
    def define_eval(
        self, test: None = None, **options: Unpack[EvalOptions]
    ) -> Callable[[TestFunction], EvalDefinition]: ...
    def define_eval(
        self, test: TestFunction | None = None, **options: Unpack[EvalOptions]
    ) -> EvalDefinition | Callable[[TestFunction], EvalDefinition]:
        """`define_eval` for an eval that uses this adapter."""
        return _define_through()(EvalKind.PASS, self, test, options)

    @overload
    def define_score_eval(self, test: TestFunction, **options: Unpack[EvalOptions]) -> EvalDefinition: ...
    @overload
    def define_score_eval(
        self, test: None = None, **options: Unpack[EvalOptions]
    ) -> Callable[[TestFunction], EvalDefinition]: ...
    def define_score_eval(
        self, test: TestFunction | None = None, **options: Unpack[EvalOptions]
    ) -> EvalDefinition | Callable[[TestFunction], EvalDefinition]:
        """`define_score_eval` for an eval that uses this adapter."""
        return _define_through()(EvalKind.SCORE, self, test, options)

    def __repr__(self) -> str:
        return f"<Adapter {self.name}>"


_DEFINE_THROUGH: Callable[..., Any] | None = None


def _define_through() -> Callable[..., Any]:
    """`_definition.define_through_adapter`, imported on first use (`_definition` imports this
    module) and then kept: not an import statement for each eval an adapter defines."""
    global _DEFINE_THROUGH
    if _DEFINE_THROUGH is None:
        from ._definition import define_through_adapter

        _DEFINE_THROUGH = define_through_adapter
    return _DEFINE_THROUGH


def _validate_names(adapter_name: str, methods: object) -> None:
    if not isinstance(methods, Mapping):
        raise AuthoringError(
            f"adapter {adapter_name!r}: assertions(check) must return a mapping of name → function, "
            f"got {type(methods).__name__}"
        )
    clash = sorted(n for n in methods if n in RESERVED_NAMES)
    if clash:
        raise AuthoringError(
            f"adapter {adapter_name!r}: assertion names {', '.join(clash)} clash with the test context's "
            f"own members ({', '.join(sorted(RESERVED_NAMES))}); rename them"
        )
    bad = sorted(str(n) for n in methods if not isinstance(n, str) or not n.isidentifier() or n.startswith("_"))
    if bad:
        raise AuthoringError(
            f"adapter {adapter_name!r}: assertion names must be identifiers not starting with '_', got {bad}"
        )


def _probe_assertion_names(adapter: Adapter) -> None:
    """Check names at definition time when `assertions(check)` can be called without effects."""

    def probe_check(*_args: Any, **_kwargs: Any) -> None:
        return None

    try:
        methods = adapter._assertions(probe_check)  # type: ignore[misc]
    except Exception:
        return  # cannot probe; names are checked per attempt instead
    _validate_names(adapter.name, methods)


def define_adapter(
    name: str,
    create: Callable[..., Any] | None = None,
    send: Callable[..., Any] | None = None,
    assertions: Callable[[Callable[..., Any]], Mapping[str, Callable[..., Any]]] | None = None,
    version: str | None = None,
    preflight: Callable[[], Any] | None = None,
    observes: Any = (),
) -> Adapter:
    """Define the boundary to a system under test (see docs/adapters.md). `preflight()`, when
    given, returns None when the system is reachable, else the cause (sync or async); `observes`
    names the event kinds its turns report completely (`"messages"`, `"tool_calls"`)."""
    return Adapter(name, create=create, send=send, assertions=assertions, version=version, preflight=preflight,
                   observes=observes)


#: What the `ADAPTERS` registry holds: (the experiment's `options` table, its id, the project root)
#: → an Adapter. The root is where a path in those options starts, wherever `niceeval` was typed.
AdapterFactory: TypeAlias = Callable[[Mapping[str, Any], str, Path], Adapter]

