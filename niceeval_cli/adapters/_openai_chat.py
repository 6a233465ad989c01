"""The built-in `openai-chat` adapter: any OpenAI-compatible chat completions endpoint.

    [experiments."models/gpt-4o-mini"]
    adapter = "openai-chat"
    model = "gpt-4o-mini"                       # the experiment's model is the one called
    [experiments."models/gpt-4o-mini".options]
    base_url = "https://api.openai.com/v1"      # default; any OpenAI-compatible /v1 endpoint
    api_key_env = "OPENAI_API_KEY"              # default; the NAME of the variable, not the key
    system_prompt = "You are a concise support agent."
    temperature = 0                             # optional; so is max_tokens
    timeout_ms = 120000
    headers = { X-Team = "evals", x-litellm-tags = "env:EVAL_TAGS" }  # optional extra headers
    retries = 2                                 # 429 / 5xx answers retried (Retry-After honoured)

Each `t.send` continues its session's conversation (`history = false` sends every message on
its own); the assistant's tool calls and the tool results are part of that history. Token usage
of every reply is recorded into `t.usage`. Extra keyword options of `t.send(message, **options)`
are added to the request body (e.g. `seed=7`).

Tools (docs/agents.md): `tools` (OpenAI tool schemas, inline or "module:attr") are sent with
every request; `tool_handlers = "module:attr"` (a dict name → callable, or one callable
`(name, input)`) runs the model's calls and sends the results back, up to `max_steps` model
requests per turn (default 8; reaching it fails the turn). Without handlers the calls are
recorded `pending` and the turn ends `waiting`.
"""

from __future__ import annotations

import importlib
import weakref
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pydantic import Field, field_validator

from .._bounds import MAX_TOOL_STEPS
from .._gateway import header_problem, redirect_text, reply_json, reported_cost, resolve_headers
from .._httpx import httpx
from .._lanes import LaneClient, lane_client
from .._project_sources import reference_files
from .._redact import redact
from .._secrets import header_secret_problem, secret_problem_text
from ..authoring import Adapter, AdapterContext, Turn
from ..traces import with_traceparent
from ._events import OBSERVES_EVENTS, EventProtocolError
from ._gateway_http import DEFAULT_RETRIES, check_chat_model, post_with_retries
from ._options import (
    AdapterOptions,
    check_env_name,
    check_url,
    load_error,
    options_table,
    parse_options,
    read_env,
    tail,
)
from ._preflight import PREFLIGHT_TIMEOUT_S
from ._tool_loop import DEFAULT_MAX_STEPS, Handlers, Posted, run_tool_loop

VERSION = "1"
_RESERVED_BODY_KEYS = frozenset({"model", "messages", "stream"})


class OpenAIChatOptions(AdapterOptions):
    base_url: str = "https://api.openai.com/v1"
    api_key_env: str = "OPENAI_API_KEY"
    system_prompt: str | None = None
    temperature: float | None = Field(default=None, ge=0)
    max_tokens: int | None = Field(default=None, gt=0)
    timeout_ms: int = Field(default=120_000, gt=0)
    history: bool = True
    tools: list[dict[str, Any]] | str | None = None
    tool_handlers: str | None = None
    max_steps: int = Field(default=DEFAULT_MAX_STEPS, gt=0, le=MAX_TOOL_STEPS)
    headers: dict[str, str] = Field(default_factory=dict)
    retries: int = Field(default=DEFAULT_RETRIES, ge=0)

    @field_validator("headers")
    @classmethod
    def _headers(cls, value: dict[str, str]) -> dict[str, str]:
        for name, text in value.items():
            problem = header_problem(name, text)
            if problem is not None:
                raise ValueError(f"header {name}: {problem}")
        return value

    @field_validator("tools", "tool_handlers")
    @classmethod
    def _reference(cls, value: Any) -> Any:
        if isinstance(value, str):
            module, sep, attr = value.partition(":")
            if not sep or not module or not attr:
                raise ValueError(f'expected "module:attr" (e.g. "myapp.tools:SCHEMAS"), got {value!r}')
        return value

    @field_validator("base_url")
    @classmethod
    def _url(cls, value: str) -> str:
        return check_url(value).rstrip("/")

    @field_validator("api_key_env")
    @classmethod
    def _env(cls, value: str) -> str:
        return check_env_name(value)


def _import(reference: str) -> Any:
    module_name, _, attr = reference.partition(":")
    value: Any = importlib.import_module(module_name)
    for part in attr.split("."):
        value = getattr(value, part)
    return value


class OpenAIChatAdapter(Adapter):
    """Sends each `t.send` as chat completion requests with the experiment's model (and runs tools)."""

    requires_model = True  # checked while planning: no model is a configuration error (exit 2)

    def __init__(self, options: OpenAIChatOptions, experiment_id: str,
                 tools: list[dict[str, Any]] | None = None, handlers: Handlers | None = None) -> None:
        super().__init__("openai-chat", send=self._send_message, version=VERSION, observes=OBSERVES_EVENTS)
        self.options = options
        self.experiment_id = experiment_id
        self.tools = tools
        self.handlers = handlers
        self._key = read_env(options.api_key_env)
        extra = resolve_headers(options.headers)  # read again per request; here for the secrets
        self.secrets: list[str] = [self._key] if self._key else []
        self.secrets.extend(extra.secrets)
        self.endpoint = options.base_url
        self._client: LaneClient | None = None
        self._states: dict[int, dict[str, Any]] = {}  # id(AdapterContext) → state, for contexts without a session
        # The project code the model's tools run: their modules are the system under test's identity.
        self.sut_files = tuple(file for ref in (options.tools, options.tool_handlers) if isinstance(ref, str)
                               for file in reference_files(ref))
        self.remote = not self.sut_files

    @property
    def url(self) -> str:
        return f"{self.options.base_url}/chat/completions"

    def _http(self) -> LaneClient:
        if self._client is None:
            self._client = lane_client(self.url, self.options.timeout_ms / 1000)
        return self._client

    def _base(self, ctx: AdapterContext, extra: Mapping[str, Any]) -> dict[str, Any]:
        clash = sorted(_RESERVED_BODY_KEYS & set(extra))
        if clash:
            raise TypeError(f"t.send options may not set {', '.join(clash)} (the experiment decides them)")
        model = ctx.experiment.model
        if not model:
            raise RuntimeError(
                f"the openai-chat adapter needs a model: set model = \"...\" in [experiments.{ctx.experiment.id}] "
                "of niceeval.toml"
            )
        body: dict[str, Any] = {"model": model}
        if self.options.temperature is not None:
            body["temperature"] = self.options.temperature
        if self.options.max_tokens is not None:
            body["max_tokens"] = self.options.max_tokens
        if self.tools:
            body["tools"] = self.tools
        body.update(extra)
        return body

    def _state(self, ctx: AdapterContext) -> dict[str, Any]:
        """The session's state; a context without a session (the adapter used on its own) keeps
        one of its own, forgotten when the context is."""
        if ctx.session is not None:
            return ctx.session.state  # type: ignore[no-any-return]
        key = id(ctx)
        if key not in self._states:
            self._states[key] = {}
            weakref.finalize(ctx, self._states.pop, key, None)
        return self._states[key]

    def _headers(self) -> dict[str, str]:
        """The key, then the configured extra headers with their `env:` values read now."""
        if not self.options.headers:  # the usual case: nothing to read per request
            return {"Authorization": f"Bearer {self._key}"}
        extra = resolve_headers(self.options.headers)
        if extra.missing:
            raise RuntimeError(self._headers_unset(extra.missing_text()))
        headers = {"Authorization": f"Bearer {self._key}"}
        for name, value in extra.headers.items():
            for known in [k for k in headers if k.lower() == name.lower()]:
                del headers[known]
            headers[name] = value
        return headers

    def _headers_unset(self, detail: str) -> str:
        return (f"environment variable(s) unset or empty ({detail}; headers of {options_table(self.experiment_id)}); "
                "set them in the environment or in .env beside niceeval.toml")

    async def _post(self, body: dict[str, Any], ctx: AdapterContext | None = None) -> Posted:
        try:
            response = await post_with_retries(self._http(), self.url, body, with_traceparent(self._headers()), ctx=ctx,
                                               retries=self.options.retries, timeout_ms=self.options.timeout_ms)
        except httpx.HTTPError as exc:
            detail = redact(f"POST {self.url} failed: {type(exc).__name__}: {exc}", self.secrets)
            raise ConnectionError(detail) from None
        if not response.is_success:
            raise RuntimeError(
                f"POST {self.url} answered HTTP {response.status_code}{redact(redirect_text(response), self.secrets)}: "
                f"{tail(response.text, self.secrets, 500)}"
            )
        try:
            reply = reply_json(response)
        except ValueError:
            raise ValueError(
                f"POST {self.url} answered something that is not a chat completion: "
                f"{tail(response.text, self.secrets, 500)}"
            ) from None
        return Posted(reply, reported_cost(response.headers))

    def _key_unset(self) -> str:
        return (f"the API key variable {self.options.api_key_env} is unset or empty (api_key_env of "
                f"{options_table(self.experiment_id)}); set it in the environment or in .env beside niceeval.toml")

    async def _send_message(self, ctx: AdapterContext, message: str, **send_options: Any) -> Turn:
        if self._key is None:  # the preflight says so once before dispatch; used alone, each send does
            raise RuntimeError(self._key_unset())
        base = self._base(ctx, send_options)
        state = self._state(ctx)
        system = [{"role": "system", "content": self.options.system_prompt}] if self.options.system_prompt else []
        earlier: list[dict[str, Any]] = state.get("openai_history", []) if self.options.history else []

        async def post(messages: list[dict[str, Any]]) -> Posted:
            return await self._post({**base, "messages": messages}, ctx)

        try:
            outcome = await run_tool_loop(message, [*system, *earlier], post, self.handlers,
                                          self.options.max_steps, where=f"the reply of POST {self.url}")
        except EventProtocolError as exc:
            raise ValueError(str(exc)) from None
        if self.options.history:
            state["openai_history"] = outcome.history[len(system):]
        return outcome.turn

    async def preflight(self) -> str | None:
        """GET {base_url}/models with the key and headers: refused or 401/403 is a cause, and so
        is a model it does not list (when it lists any). A server without `/models` is asked
        one `max_tokens = 1` completion instead: 404 or `400` "unknown model" is a cause."""
        if self._key is None:  # every send would refuse: one setup error instead of one per attempt
            return self._key_unset()
        problem = header_secret_problem(self._key)
        if problem is not None:  # a key that cannot be a header: never sent, never shown
            return secret_problem_text(self.options.api_key_env, problem)
        extra = resolve_headers(self.options.headers)
        if extra.missing:
            return self._headers_unset(extra.missing_text())
        for value in extra.secrets:
            problem = header_secret_problem(value)
            if problem is not None:  # a header secret that cannot be sent: never sent, never shown
                return f"a variable named in the headers of {options_table(self.experiment_id)} holds a value " \
                       f"that cannot be a header ({problem})"
        hint = f" (check the key in {self.options.api_key_env})"
        return await check_chat_model(self.options.base_url, self.preflight_model, self._headers(),
                                      secrets=self.secrets, refused_hint=hint,
                                      url_key=f"base_url in {options_table(self.experiment_id)}",
                                      timeout_s=min(self.options.timeout_ms / 1000, PREFLIGHT_TIMEOUT_S))

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None


def _load_tools(parsed: OpenAIChatOptions, experiment_id: str) -> list[dict[str, Any]] | None:
    value: Any = parsed.tools
    if isinstance(value, str):
        try:
            value = _import(value)
        except Exception as exc:
            raise load_error(experiment_id, "openai-chat", "tools",
                             f"cannot import {parsed.tools!r} ({type(exc).__name__}: {exc})") from None
    if value is None:
        return None
    if not isinstance(value, (list, tuple)) or not all(isinstance(t, Mapping) for t in value):
        raise load_error(experiment_id, "openai-chat", "tools",
                         "expected a list of OpenAI tool schemas ({\"type\": \"function\", \"function\": {...}})")
    return [dict(t) for t in value]


def _load_handlers(parsed: OpenAIChatOptions, experiment_id: str) -> Handlers | None:
    if parsed.tool_handlers is None:
        return None
    try:
        value = _import(parsed.tool_handlers)
    except Exception as exc:
        raise load_error(experiment_id, "openai-chat", "tool_handlers",
                         f"cannot import {parsed.tool_handlers!r} ({type(exc).__name__}: {exc})") from None
    if isinstance(value, Mapping):
        bad = sorted(str(k) for k, fn in value.items() if not isinstance(k, str) or not callable(fn))
        if bad:
            raise load_error(experiment_id, "openai-chat", "tool_handlers",
                             f"every entry must map a tool name to a function; not: {', '.join(bad)}")
        handlers: Mapping[str, Callable[..., Any]] = dict(value)
        return handlers
    if callable(value):
        return value  # type: ignore[no-any-return]
    raise load_error(experiment_id, "openai-chat", "tool_handlers",
                     f"{parsed.tool_handlers} is a {type(value).__name__}; expected a dict name → function "
                     "or one function (name, input)")


def build(options: Mapping[str, Any], experiment_id: str, root: Path) -> OpenAIChatAdapter:
    """The `openai-chat` adapter of one experiment (the key is read from the environment now)."""
    parsed = parse_options(OpenAIChatOptions, options, experiment_id, "openai-chat")
    return OpenAIChatAdapter(parsed, experiment_id, _load_tools(parsed, experiment_id),
                             _load_handlers(parsed, experiment_id))
