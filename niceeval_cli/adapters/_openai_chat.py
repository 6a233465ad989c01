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

Each `t.send` in one Attempt continues the same conversation (`history = false` sends every
message on its own). Token usage of every reply is recorded into `t.usage`. Extra keyword
options of `t.send(message, **options)` are added to the request body (e.g. `seed=7`).
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Mapping
from typing import Any

from pydantic import Field, field_validator

from .._httpx import httpx
from .._redact import redact
from .._secrets import header_secret_problem, secret_problem_text
from ..authoring import Adapter, AdapterContext, Turn, Usage
from ._options import AdapterOptions, check_env_name, check_url, options_table, parse_options, read_env, tail
from ._preflight import PREFLIGHT_TIMEOUT_S, probe_url

VERSION = "1"
_RESERVED_BODY_KEYS = frozenset({"model", "messages"})


class OpenAIChatOptions(AdapterOptions):
    base_url: str = "https://api.openai.com/v1"
    api_key_env: str = "OPENAI_API_KEY"
    system_prompt: str | None = None
    temperature: float | None = Field(default=None, ge=0)
    max_tokens: int | None = Field(default=None, gt=0)
    timeout_ms: int = Field(default=120_000, gt=0)
    history: bool = True

    @field_validator("base_url")
    @classmethod
    def _url(cls, value: str) -> str:
        return check_url(value).rstrip("/")

    @field_validator("api_key_env")
    @classmethod
    def _env(cls, value: str) -> str:
        return check_env_name(value)


def _int_or_none(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


class OpenAIChatAdapter(Adapter):
    """Sends each `t.send` as a chat completion request with the experiment's model."""

    def __init__(self, options: OpenAIChatOptions, experiment_id: str) -> None:
        super().__init__("openai-chat", send=self._send_message, version=VERSION)
        self.options = options
        self.experiment_id = experiment_id
        self._key = read_env(options.api_key_env)
        self.secrets: list[str] = [self._key] if self._key else []
        self.endpoint = options.base_url
        self._client: httpx.AsyncClient | None = None
        self._histories: dict[int, list[dict[str, str]]] = {}  # id(AdapterContext) → messages

    @property
    def url(self) -> str:
        return f"{self.options.base_url}/chat/completions"

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient(timeout=self.options.timeout_ms / 1000)
        return self._client

    def _history(self, ctx: AdapterContext) -> list[dict[str, str]]:
        """This Attempt's conversation so far (forgotten when the Attempt's context is)."""
        key = id(ctx)
        if key not in self._histories:
            self._histories[key] = []
            weakref.finalize(ctx, self._histories.pop, key, None)
        return self._histories[key]

    def _request(self, ctx: AdapterContext, message: str, extra: Mapping[str, Any]) -> dict[str, Any]:
        clash = sorted(_RESERVED_BODY_KEYS & set(extra))
        if clash:
            raise TypeError(f"t.send options may not set {', '.join(clash)} (the experiment decides them)")
        model = ctx.experiment.model
        if not model:
            raise RuntimeError(
                f"the openai-chat adapter needs a model: set model = \"...\" in [experiments.{ctx.experiment.id}] "
                "of niceeval.toml"
            )
        messages: list[dict[str, str]] = []
        if self.options.system_prompt:
            messages.append({"role": "system", "content": self.options.system_prompt})
        if self.options.history:
            messages.extend(self._history(ctx))
        messages.append({"role": "user", "content": message})
        body: dict[str, Any] = {"model": model, "messages": messages}
        if self.options.temperature is not None:
            body["temperature"] = self.options.temperature
        if self.options.max_tokens is not None:
            body["max_tokens"] = self.options.max_tokens
        body.update(extra)
        return body

    async def _send_message(self, ctx: AdapterContext, message: str, **send_options: Any) -> Turn:
        if self._key is None:
            raise RuntimeError(
                f"the API key variable {self.options.api_key_env} is unset or empty (api_key_env of "
                f"{options_table(self.experiment_id)}); set it in the environment or in .env beside "
                "niceeval.toml"
            )
        body = self._request(ctx, message, send_options)
        headers = {"Authorization": f"Bearer {self._key}"}
        try:
            response = await self._http().post(self.url, json=body, headers=headers)
        except httpx.TimeoutException:
            raise TimeoutError(f"POST {self.url} got no reply within timeout_ms={self.options.timeout_ms}") from None
        except httpx.HTTPError as exc:
            detail = redact(f"POST {self.url} failed: {type(exc).__name__}: {exc}", self.secrets)
            raise ConnectionError(detail) from None
        if not response.is_success:
            raise RuntimeError(
                f"POST {self.url} answered HTTP {response.status_code}: {tail(response.text, self.secrets, 500)}"
            )
        try:
            reply = response.json()
            choice = reply["choices"][0]
            content = choice["message"]["content"]
        except (json.JSONDecodeError, KeyError, IndexError, TypeError):
            raise ValueError(
                f"POST {self.url} answered something that is not a chat completion: "
                f"{tail(response.text, self.secrets, 500)}"
            ) from None
        if not isinstance(content, str):
            raise ValueError(
                f"the chat completion from {self.url} has no text content (finish_reason "
                f"{choice.get('finish_reason')!r})"
            )
        if self.options.history:
            self._history(ctx).extend([{"role": "user", "content": message},
                                       {"role": "assistant", "content": content}])
        usage = reply.get("usage") if isinstance(reply, Mapping) else None
        turn_usage = None
        if isinstance(usage, Mapping):
            turn_usage = Usage(input_tokens=_int_or_none(usage.get("prompt_tokens")),
                               output_tokens=_int_or_none(usage.get("completion_tokens")))
        return Turn(input=message, message=content, data=reply, usage=turn_usage)

    async def preflight(self) -> str | None:
        """GET {base_url}/models with the key: costs no tokens and needs no model, and every
        OpenAI-compatible server answers it; refused or 401/403/404 is a cause."""
        problem = header_secret_problem(self._key) if self._key else None
        if problem is not None:  # a key that cannot be a header: never sent, never shown
            return secret_problem_text(self.options.api_key_env, problem)
        headers = {"Authorization": f"Bearer {self._key}"} if self._key else {}
        name = self.options.api_key_env
        hint = (f" (check the key in {name})" if self._key
                else f" (the API key variable {name} is unset or empty)")
        return await probe_url("GET", f"{self.options.base_url}/models", headers=headers, secrets=self.secrets,
                               timeout_s=min(self.options.timeout_ms / 1000, PREFLIGHT_TIMEOUT_S),
                               refused_hint=hint)

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None


def build(options: Mapping[str, Any], experiment_id: str) -> OpenAIChatAdapter:
    """The `openai-chat` adapter of one experiment (the key is read from the environment now)."""
    return OpenAIChatAdapter(parse_options(OpenAIChatOptions, options, experiment_id, "openai-chat"), experiment_id)
