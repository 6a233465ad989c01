"""The span conversion rules of docs/integrations.md ("OpenTelemetry"), on plain spans."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from niceeval_cli.traces._spans import SpanData, convert


def _span(name: str, start: int, **attrs: object) -> SpanData:
    return SpanData(name, "t" * 32, f"{start:016x}", None, start, start + 5, attributes=dict(attrs))


def test_a_failed_tool_span_keeps_its_error_and_json_arguments_are_parsed() -> None:
    failed = SpanData("execute_tool pay", "t" * 32, "a" * 16, None, 20, 30, error=True, status_message="card declined",
                      attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "pay",
                                  "gen_ai.tool.call.arguments": '{"amount": 3}'})
    typed = _span("x", 40, **{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search",
                              "error.type": "TimeoutError", "gen_ai.tool.call.arguments": "not json"})
    calls = convert([typed, failed]).tool_calls
    assert [(c.name, c.status, c.error, c.input) for c in calls] == [
        ("pay", "failed", "card declined", {"amount": 3}), ("search", "failed", "TimeoutError", "not json")]
    assert (calls[0].started_ms, calls[0].ended_ms, calls[0].id) == (20 / 1e6, 30 / 1e6, "a" * 16)


def test_usage_is_summed_over_model_spans_and_an_agent_span_never_counts_twice() -> None:
    spans = [_span("agent", 1, **{"gen_ai.operation.name": "invoke_agent", "gen_ai.usage.input_tokens": 30}),
             _span("chat", 2, **{"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 10,
                                 "gen_ai.usage.output_tokens": 1, "gen_ai.request.model": "m"}),
             _span("llm", 3, **{"openinference.span.kind": "LLM", "llm.token_count.prompt": 20})]
    converted = convert(spans)
    assert (converted.usage.input_tokens, converted.usage.output_tokens, converted.model) == (30, 1, "m")
    only_agent = convert([_span("agent", 1, **{"gen_ai.operation.name": "invoke_agent",
                                                "gen_ai.usage.input_tokens": 30})])
    assert only_agent.usage is not None and only_agent.usage.input_tokens == 30
    assert convert([_span("other", 1)]).usage is None


_PIECES = ("{", "}", "[", "]", '"', ":", ",", " ", "\n", "1", "-", "e", "a", "true", "null", "NaN", "é", "\\", "u")


@given(st.lists(st.sampled_from(_PIECES), max_size=12).map("".join) | st.integers() | st.none())
def test_an_argument_that_is_json_text_is_parsed_as_json_loads_parses_it_and_anything_else_kept(value: object) -> None:
    from niceeval_cli.traces._spans import _json_or_text

    expected = value
    if isinstance(value, str):
        stripped = value.strip()
        if stripped[:1] in ("{", "[", '"') or stripped in ("true", "false", "null"):
            try:
                expected = json.loads(stripped)
            except ValueError:
                expected = value
    got = _json_or_text(value)
    assert got == expected or (got != got and expected != expected)  # NaN parsed either way
