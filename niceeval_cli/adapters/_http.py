"""The built-in `http` adapter: `t.send(message)` POSTs JSON to your service and reads one field.

    [experiments.staging]
    adapter = "http"
    [experiments.staging.options]
    url = "https://staging.example.com/api/chat"
    request_template = { input = "{message}", session = "eval" }    # "{message}" is replaced
    response_path = "output.text"                                 # dotted; list items by index
    headers = { Authorization = "Bearer {env:STAGING_TOKEN}", X-Team = "evals" }
    timeout_ms = 30000
    retries = 2                                 # 429 / 5xx answers retried (Retry-After honoured)

Header values may name secrets as `env:NAME` (the whole value) or `{env:NAME}` inside text; the
values are read from the environment (or `.env`) when the adapter loads and never stored or
printed. Credential headers (`Authorization`, `Cookie`, `*api-key*`, `*token*`) must use an env
reference, so a key cannot end up in `niceeval.toml` or in the stored fingerprint.
Optional `input_tokens_path` / `output_tokens_path` read token usage from the reply.

Agent events (docs/adapters.md, "The event protocol"): `events_path = "events"` reads a list of
event objects from the reply (the turn then observes messages and tool calls), and
`format = "openai"` reads the reply as an OpenAI chat completion (text, tool calls, usage;
`response_path` is not used).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator

from .._credentials import looks_like_secret
from .._gateway import CREDENTIAL_HEADER, ENV_REF, header_template, redirect_text, reply_json
from .._httpx import httpx
from .._lanes import LaneClient, lane_client
from .._redact import redact
from .._secrets import header_secret_problem, secret_problem_text
from ..authoring import Adapter, AdapterContext, Turn, Usage
from ..traces import with_traceparent
from ._events import OBSERVES_EVENTS, events_from_list, turn_from_chat_reply
from ._gateway_http import DEFAULT_RETRIES, post_with_retries
from ._options import AdapterOptions, check_url, load_error, options_table, parse_options, read_env, tail
from ._preflight import PREFLIGHT_TIMEOUT_S, probe_url

VERSION = "1"
_ENV_REF = ENV_REF
_CREDENTIAL_HEADER = CREDENTIAL_HEADER


class HttpOptions(AdapterOptions):
    url: str
    request_template: dict[str, Any] = Field(default_factory=lambda: {"message": "{message}"})
    response_path: str = "message"
    headers: dict[str, str] = Field(default_factory=dict)
    timeout_ms: int = Field(default=60_000, gt=0)
    input_tokens_path: str | None = None
    output_tokens_path: str | None = None
    events_path: str | None = None
    format: Literal["fields", "openai"] = "fields"
    retries: int = Field(default=DEFAULT_RETRIES, ge=0)

    @field_validator("url")
    @classmethod
    def _url(cls, value: str) -> str:
        return check_url(value)

    @field_validator("response_path", "input_tokens_path", "output_tokens_path", "events_path")
    @classmethod
    def _path(cls, value: str | None) -> str | None:
        if value is not None and (not value or any(not part for part in value.split("."))):
            raise ValueError(f"expected a dotted path such as 'choices.0.message.content', got {value!r}")
        return value


def fill_template(value: Any, message: str) -> Any:
    """A copy of the JSON template with every "{message}" inside a string replaced."""
    if isinstance(value, str):
        return value.replace("{message}", message)
    if isinstance(value, Mapping):
        return {key: fill_template(item, message) for key, item in value.items()}
    if isinstance(value, list):
        return [fill_template(item, message) for item in value]
    return value


def read_path(document: Any, path: str) -> Any:
    """The value at a dotted path ("choices.0.message.content"); KeyError naming where it stopped."""
    current = document
    walked: list[str] = []
    for part in path.split("."):
        if isinstance(current, list) and part.lstrip("-").isdigit():
            index = int(part)
            if not -len(current) <= index < len(current):
                raise KeyError(f"{'.'.join(walked) or 'the reply'} has {len(current)} item(s), no index {part}")
            current = current[index]
        elif isinstance(current, Mapping) and part in current:
            current = current[part]
        else:
            where = ".".join(walked) or "the reply"
            kind = type(current).__name__
            keys = f" (keys: {', '.join(map(str, list(current)[:10]))})" if isinstance(current, Mapping) else ""
            raise KeyError(f"{where} is a {kind} without {part!r}{keys}")
        walked.append(part)
    return current


def _template(value: str) -> str:
    return header_template(value)


def _resolve_header(name: str, value: str, experiment_id: str) -> tuple[str, list[str], list[str]]:
    """(resolved value, secrets read, missing variable names)."""
    template = _template(value)
    names = _ENV_REF.findall(template)
    if not names and (_CREDENTIAL_HEADER.search(name) or looks_like_secret(value)):
        what = "a credential header" if _CREDENTIAL_HEADER.search(name) else "this looks like a key: a header"
        raise load_error(
            experiment_id, "http", f"headers.{name}",
            f'{what} must name its secret as "env:VAR_NAME" (or "Bearer {{env:VAR_NAME}}"), '
            "so the key stays out of niceeval.toml and the stored results",
        )
    secrets, missing = [], []
    for var in names:
        found = read_env(var)
        if found is None:
            missing.append(var)
        else:
            secrets.append(found)
    resolved = _ENV_REF.sub(lambda m: read_env(m.group(1)) or "", template)
    return resolved, secrets, missing


class HttpAdapter(Adapter):
    """POSTs the filled request template to `url` once per `t.send`."""

    def __init__(self, options: HttpOptions, headers: dict[str, str], secrets: list[str],
                 missing: dict[str, list[str]], experiment_id: str = "<id>") -> None:
        reports_events = options.events_path is not None or options.format == "openai"
        super().__init__("http", send=self._send_message, version=VERSION,
                         observes=OBSERVES_EVENTS if reports_events else ())
        self.options = options
        self.secrets: list[str] = secrets
        self._headers = headers
        self._missing = missing  # header → unset variables: every send fails with this
        self._header_vars: dict[str, list[str]] = {}  # header → the variables it reads
        self.experiment_id = experiment_id
        self.endpoint = options.url
        self._client: LaneClient | None = None

    def _http(self) -> LaneClient:
        if self._client is None:
            self._client = lane_client(self.options.url, self.options.timeout_ms / 1000)
        return self._client

    def _redact(self, text: str) -> str:
        return redact(text, self.secrets)

    def _unset(self) -> str:
        detail = "; ".join(f"header {h} needs {', '.join(v)}" for h, v in self._missing.items())
        return (f"environment variable(s) unset or empty ({detail}; {options_table(self.experiment_id)}); "
                "set them in the environment or in .env beside niceeval.toml")

    async def _send_message(self, ctx: AdapterContext, message: str, **send_options: Any) -> Turn:
        if send_options:
            raise TypeError(f"the http adapter takes no t.send options, got {', '.join(sorted(send_options))}")
        if self._missing:  # the preflight says so once before dispatch; used alone, each send does
            raise RuntimeError(self._unset())
        url = self.options.url
        body = fill_template(self.options.request_template, message)
        try:
            response = await post_with_retries(self._http(), url, body, with_traceparent(self._headers), ctx=ctx,
                                               retries=self.options.retries, timeout_ms=self.options.timeout_ms)
        except httpx.HTTPError as exc:
            raise ConnectionError(self._redact(f"POST {url} failed: {type(exc).__name__}: {exc}")) from None
        if not response.is_success:
            raise RuntimeError(
                f"POST {url} answered HTTP {response.status_code}{self._redact(redirect_text(response))}: "
                f"{tail(response.text, self.secrets, 500)}"
            )
        try:
            reply = reply_json(response)
        except ValueError:
            raise ValueError(f"POST {url} answered non-JSON: {tail(response.text, self.secrets, 500)}") from None
        if self.options.format == "openai":
            return turn_from_chat_reply(message, reply, f"the reply of POST {url}")
        try:
            value = read_path(reply, self.options.response_path)
        except KeyError as exc:
            raise ValueError(
                f"response_path {self.options.response_path!r} not found in the reply of {url}: {exc.args[0]}"
            ) from None
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        if self.options.events_path is None:
            return Turn(input=message, message=text, data=reply, usage=self._usage(reply), observed=frozenset())
        try:
            raw_events = read_path(reply, self.options.events_path)
        except KeyError as exc:
            raise ValueError(
                f"events_path {self.options.events_path!r} not found in the reply of {url}: {exc.args[0]}"
            ) from None
        events = events_from_list(raw_events, f"events_path {self.options.events_path!r} of the reply of {url}")
        return Turn(input=message, message=text, events=events, data=reply, usage=self._usage(reply),
                    observed=frozenset(OBSERVES_EVENTS))

    def _usage(self, reply: Any) -> Usage | None:
        paths = (self.options.input_tokens_path, self.options.output_tokens_path)
        if paths == (None, None):
            return None
        counts: list[int | None] = []
        for path in paths:
            if path is None:
                counts.append(None)
                continue
            try:
                n = read_path(reply, path)
            except KeyError:
                n = None  # not reported this time: unknown, never 0
            counts.append(n if isinstance(n, int) and not isinstance(n, bool) and n >= 0 else None)
        return Usage(input_tokens=counts[0], output_tokens=counts[1])

    async def preflight(self) -> str | None:
        """OPTIONS `url` with the configured headers: refused or 401/403/404 is a cause. OPTIONS
        triggers nothing in the service; a route that exists answers 2xx or 405, a wrong one 404."""
        for var in sorted({v for vs in self._header_vars.values() for v in vs}):
            value = read_env(var)
            problem = header_secret_problem(value) if value else None
            if problem is not None:  # a secret that cannot be a header: never sent, never shown
                return secret_problem_text(var, problem, what="secret")
        if self._missing:  # every send would refuse: one setup error instead of one per attempt
            return self._unset()
        hint = f" (check the headers in {options_table(self.experiment_id)})"
        return await probe_url("OPTIONS", self.options.url, headers=self._headers, secrets=self.secrets,
                               timeout_s=min(self.options.timeout_ms / 1000, PREFLIGHT_TIMEOUT_S),
                               refused_hint=hint, url_key=f"url in {options_table(self.experiment_id)}")

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None


def build(options: Mapping[str, Any], experiment_id: str, root: Path) -> HttpAdapter:
    """The `http` adapter of one experiment; header secrets are read from the environment now."""
    parsed = parse_options(HttpOptions, options, experiment_id, "http")
    if parsed.format == "openai" and parsed.events_path is not None:
        raise load_error(experiment_id, "http", "events_path",
                         'format = "openai" reads the tool calls of the chat completion; drop events_path')
    headers: dict[str, str] = {}
    secrets: list[str] = []
    missing: dict[str, list[str]] = {}
    header_vars: dict[str, list[str]] = {}
    for name, value in parsed.headers.items():
        resolved, found, unset = _resolve_header(name, value, experiment_id)
        headers[name] = resolved
        header_vars[name] = _ENV_REF.findall(_template(value))
        secrets.extend(found)
        if unset:
            missing[name] = unset
    adapter = HttpAdapter(parsed, headers, secrets, missing, experiment_id)
    adapter._header_vars = header_vars
    return adapter
