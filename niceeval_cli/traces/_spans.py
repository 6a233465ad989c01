"""Spans → what a turn holds: tool calls, usage, model, final text, and the spans as events.

One plain form (`SpanData`) for both sources — SDK spans in process, OTLP spans decoded by the
receiver — so the conversion rules of docs/integrations.md live in one place:

- GenAI semantic conventions: `gen_ai.operation.name = "execute_tool"` → a ToolCall
  (`gen_ai.tool.name`, `.call.id`, `.call.arguments`, `.call.result`; failed when the span's status
  is an error or it carries `error.type`); `chat` / `text_completion` / `invoke_agent` → usage
  (`gen_ai.usage.input_tokens` / `output_tokens`) and model (`gen_ai.request.model`).
- OpenInference: `openinference.span.kind = "TOOL"` → a ToolCall (`tool.name`, `input.value`,
  `output.value`); `LLM` → usage (`llm.token_count.prompt` / `completion`), model `llm.model_name`.

Usage is summed over the model spans. An `invoke_agent` span usually repeats the sum of the
model calls under it, so its tokens count only when no `chat` / `text_completion` / `LLM` span of
the turn reported any (never counted twice). Other spans are ignored (still stored as events).
"""

from __future__ import annotations

import json
import json.scanner
from dataclasses import dataclass, field
from typing import Any

from ..authoring import Event, ToolCall, Usage

_MODEL_OPS = ("chat", "text_completion", "generate_content")
_AGENT_OPS = ("invoke_agent",)


@dataclass(slots=True)
class SpanData:
    """One finished span, whatever its source. (Not frozen: a frozen dataclass sets each of its
    nine fields through `object.__setattr__`, and a turn makes one per span; nothing changes one
    after it is made.)"""

    name: str
    trace_id: str  # 32 hex digits
    span_id: str  # 16 hex digits
    parent_span_id: str | None
    start_ns: int
    end_ns: int
    error: bool = False  # the span's status is ERROR
    status_message: str | None = None
    attributes: dict[str, Any] = field(default_factory=dict)

    def as_event(self) -> Event:
        """The span as the turn stores it (`query events`: kind `span`)."""
        data: dict[str, Any] = {
            "name": self.name, "trace_id": self.trace_id, "span_id": self.span_id,
            "parent_span_id": self.parent_span_id, "started_ms": self.start_ns / 1e6,
            "ended_ms": self.end_ns / 1e6, "status": "error" if self.error else "ok",
        }
        if self.status_message:
            data["status_message"] = self.status_message
        data["attributes"] = self.attributes
        return Event("span", data)


@dataclass(frozen=True)
class Converted:
    """What the spans of one turn say."""

    tool_calls: tuple[ToolCall, ...]
    usage: Usage | None
    model: str | None
    text: str | None
    events: tuple[Event, ...]


def _scanner() -> Any:
    make = getattr(json.scanner, "c_make_scanner", None)
    return make(json.JSONDecoder()) if make is not None else None


_SCAN = _scanner()


_JSON_STARTS = frozenset('{["')
_JSON_WORDS = frozenset(("true", "false", "null"))


def _json_or_text(value: Any) -> Any:
    """JSON text is parsed (arguments and results usually are); anything else stays as it is."""
    if not isinstance(value, str):
        return value
    stripped = value.strip()
    if stripped[:1] in _JSON_STARTS or stripped in _JSON_WORDS:
        if _SCAN is None:
            try:
                return json.loads(stripped)
            except (ValueError, RecursionError):  # not JSON, or nested past what the parser reads
                return value
        try:  # json's C scanner made once (`json.loads` builds its way there per call)
            parsed, end = _SCAN(stripped, 0)
        except (StopIteration, ValueError, RecursionError):
            return value
        return parsed if end == len(stripped) else value
    return value


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def _tool_call(span: SpanData, name: Any, call_id: Any, arguments: Any, result: Any) -> ToolCall:
    attrs = span.attributes
    error_type = attrs.get("error.type")
    failed = span.error or bool(error_type)
    error = None
    if failed:
        error = span.status_message or (str(error_type) if error_type else None) or "the span's status is ERROR"
    return ToolCall(  # positional (name, input, output, status, id, error, started_ms, ended_ms): one per span
        str(name) if name else span.name,
        _json_or_text(arguments),
        _json_or_text(result),
        "failed" if failed else "completed",
        str(call_id) if call_id else span.span_id,
        error,
        span.start_ns / 1e6,
        span.end_ns / 1e6,
    )


def _assistant_text(attrs: dict[str, Any]) -> str | None:
    """The final assistant text a model span carries, when present."""
    raw = attrs.get("gen_ai.output.messages")
    if isinstance(raw, str):
        try:
            messages = json.loads(raw)
        except (ValueError, RecursionError):  # not JSON, or nested past what the parser reads
            messages = None
        if isinstance(messages, list):
            for message in reversed(messages):
                if isinstance(message, dict) and message.get("role", "assistant") == "assistant":
                    parts = message.get("parts") or []
                    texts = [p.get("content") for p in parts if isinstance(p, dict) and p.get("type") == "text"]
                    text = "".join(t for t in texts if isinstance(t, str))
                    if text:
                        return text
    for i in range(16, -1, -1):  # OpenInference: llm.output_messages.<i>.message.content
        content = attrs.get(f"llm.output_messages.{i}.message.content")
        if isinstance(content, str) and content:
            return content
    return None


def convert(spans: list[SpanData]) -> Converted:
    """The turn's tool calls (by span start), summed usage, model and final text, and the events."""
    ordered = sorted(spans, key=lambda s: (s.start_ns, s.end_ns))
    calls: list[ToolCall] = []
    model_in: list[int] = []
    model_out: list[int] = []
    agent_in: list[int] = []
    agent_out: list[int] = []
    model: str | None = None
    text: str | None = None
    for span in ordered:
        attrs = span.attributes
        op = attrs.get("gen_ai.operation.name")
        kind = attrs.get("openinference.span.kind")
        if op == "execute_tool":
            calls.append(_tool_call(span, attrs.get("gen_ai.tool.name"), attrs.get("gen_ai.tool.call.id"),
                                    attrs.get("gen_ai.tool.call.arguments"), attrs.get("gen_ai.tool.call.result")))
        elif kind == "TOOL":
            calls.append(_tool_call(span, attrs.get("tool.name"), attrs.get("tool_call.id"),
                                    attrs.get("input.value"), attrs.get("output.value")))
        elif op in _MODEL_OPS or op in _AGENT_OPS or kind == "LLM":
            into_in, into_out = (agent_in, agent_out) if op in _AGENT_OPS else (model_in, model_out)
            if kind == "LLM":
                tokens_in, tokens_out = attrs.get("llm.token_count.prompt"), attrs.get("llm.token_count.completion")
                named = attrs.get("llm.model_name")
            else:
                tokens_in, tokens_out = attrs.get("gen_ai.usage.input_tokens"), attrs.get("gen_ai.usage.output_tokens")
                named = attrs.get("gen_ai.request.model") or attrs.get("gen_ai.response.model")
            if (n := _int(tokens_in)) is not None:
                into_in.append(n)
            if (n := _int(tokens_out)) is not None:
                into_out.append(n)
            if isinstance(named, str) and named:
                model = named
            said = _assistant_text(attrs)
            if said:
                text = said
    counted_in, counted_out = (model_in, model_out) if (model_in or model_out) else (agent_in, agent_out)
    usage = None
    if counted_in or counted_out:
        usage = Usage(input_tokens=sum(counted_in) if counted_in else None,
                      output_tokens=sum(counted_out) if counted_out else None)
    return Converted(tuple(calls), usage, model, text, tuple(s.as_event() for s in ordered))


__all__ = ["Converted", "SpanData", "convert"]
