"""Grading against the loopback judge: scales, answer forms, failure classes, redaction."""

from __future__ import annotations

import json

import pytest

from niceeval_cli._states import AssertionState, ErroredReason, UnavailableReason
from niceeval_cli.expect import Fact, Material, closed_qa, factuality, summarizes
from tests.support.loopback import Reply

QA = {"input": "How long is the refund window?", "output": "You have 30 days."}
TRANSPORT_ERROR = (AssertionState.UNAVAILABLE, UnavailableReason.JUDGE_TRANSPORT_ERROR)


@pytest.mark.parametrize(("letter", "value"), [("Y", 1.0), ("N", 0.0)])
async def test_closed_qa_letters_map_to_one_and_zero(judge_server, service, make_settings, letter, value):
    judge_server.default = Reply.tool(letter, "because")
    grade = await service.grade(closed_qa("States the window?"), QA, make_settings())
    assert grade.state == AssertionState.MEASURED
    assert grade.measurement == value and grade.reason is None
    assert grade.explanation == f"{letter}: because"


@pytest.mark.parametrize(("letter", "value"), [("A", 0.4), ("B", 0.6), ("C", 1.0), ("D", 0.0), ("E", 1.0)])
async def test_factuality_categories_map_to_fixed_values(judge_server, service, make_settings, letter, value):
    judge_server.default = Reply.tool(letter)
    grade = await service.grade(factuality("The window is 30 days."), QA, make_settings())
    assert (grade.state, grade.measurement) == (AssertionState.MEASURED, value)


@pytest.mark.parametrize(("letter", "value"), [("Y", 1.0), ("N", 0.0)])
async def test_summarizes_letters_map_to_one_and_zero(judge_server, service, make_settings, letter, value):
    judge_server.default = Reply.content(letter)
    grade = await service.grade(summarizes("A long source."), {"output": "Short."}, make_settings())
    assert (grade.state, grade.measurement) == (AssertionState.MEASURED, value)


async def test_the_request_is_a_forced_grade_call_with_bearer_auth(
    judge_server, service, make_settings, judge_key,
):
    await service.grade(closed_qa("States the window?"), QA, make_settings())
    (request,) = judge_server.requests
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {judge_key}"
    body = request.json
    assert body["model"] == "judge-test"
    assert body["tool_choice"]["function"]["name"] == "grade"
    assert "You have 30 days." in body["messages"][1]["content"]


@pytest.mark.parametrize("reply", [
    Reply.content("C", "same facts"),
    Reply.content("C", "same facts", fenced=True),
    Reply.text('I think {"reasoning": "same facts", "choice": "c"} is right'),
    Reply.completion({"content": None, "function_call": {
        "name": "grade", "arguments": '{"reasoning": "same facts", "choice": "C"}'}}),
])
async def test_content_json_and_legacy_function_call_are_accepted(
    judge_server, service, make_settings, reply,
):
    judge_server.default = reply
    grade = await service.grade(factuality("r"), QA, make_settings())
    assert grade.state == AssertionState.MEASURED and grade.measurement == 1.0
    assert grade.explanation == "C: same facts"


async def test_token_usage_is_reported_per_grade(judge_server, service, make_settings):
    usage = {"prompt_tokens": 7, "completion_tokens": 5, "total_tokens": 12}
    judge_server.default = Reply.tool("Y", usage=usage)
    grade = await service.grade(closed_qa("q"), QA, make_settings())
    assert grade.tokens == 12
    judge_server.default = Reply.tool("Y", usage={"prompt_tokens": 3, "completion_tokens": 4})
    assert (await service.grade(closed_qa("q"), QA, make_settings())).tokens == 7
    judge_server.default = Reply.tool("Y", usage=None)
    assert (await service.grade(closed_qa("q"), QA, make_settings())).tokens == 0
    assert service.total_tokens == 19


async def test_captured_material_items_are_graded(judge_server, service, make_settings):
    items = [{"speaker": "B", "text": "Go north past the well."}]
    grade = await service.grade(closed_qa("Gave directions?"), Material.complete(items), make_settings())
    assert grade.state == AssertionState.MEASURED
    assert "Go north past the well." in judge_server.requests[0].json["messages"][1]["content"]
    assert json.loads(grade.evidence or "") == items


# ---- failure table (judge.md "Preflight and failure classes") -------------------------------

async def test_no_model_is_unavailable_without_any_request(judge_server, service, make_settings):
    grade = await service.grade(closed_qa("q"), QA, make_settings(model=None))
    assert grade.state == AssertionState.UNAVAILABLE
    assert grade.reason == UnavailableReason.JUDGE_MODEL_UNRESOLVED
    assert grade.measurement is None and grade.tokens == 0 and grade.audit is None
    assert judge_server.requests == []


@pytest.mark.parametrize("value", [None, ""])
async def test_unset_or_empty_key_is_unavailable_without_any_request(
    judge_server, service, make_settings, monkeypatch, value,
):
    settings = make_settings()
    if value is None:
        monkeypatch.delenv(settings.api_key_env)
    else:
        monkeypatch.setenv(settings.api_key_env, value)
    grade = await service.grade(closed_qa("q"), QA, settings)
    assert (grade.state, grade.reason) == (AssertionState.UNAVAILABLE, UnavailableReason.JUDGE_KEY_UNRESOLVED)
    assert settings.api_key_env in grade.explanation
    assert judge_server.requests == []


def test_resolve_problem_names_the_missing_piece(service, make_settings, monkeypatch):
    assert service.resolve_problem(None) == UnavailableReason.JUDGE_MODEL_UNRESOLVED
    assert service.resolve_problem(make_settings(model=None)) == UnavailableReason.JUDGE_MODEL_UNRESOLVED
    assert service.resolve_problem(make_settings()) is None
    monkeypatch.setenv(make_settings().api_key_env, "")
    assert service.resolve_problem(make_settings()) == UnavailableReason.JUDGE_KEY_UNRESOLVED


async def test_rate_limited_after_retries(judge_server, service, make_settings):
    judge_server.default = Reply.error(429, "slow down")
    grade = await service.grade(closed_qa("q"), QA, make_settings(max_retries=2))
    assert (grade.state, grade.reason) == (AssertionState.UNAVAILABLE, UnavailableReason.JUDGE_RATE_LIMITED)
    assert "429" in grade.explanation and "slow down" in grade.explanation
    assert grade.measurement is None and len(judge_server.requests) == 3


async def test_server_errors_after_retries_are_transport_errors(judge_server, service, make_settings):
    judge_server.default = Reply.error(503, "overloaded")
    grade = await service.grade(closed_qa("q"), QA, make_settings(max_retries=1))
    assert (grade.state, grade.reason) == TRANSPORT_ERROR
    assert "503" in grade.explanation and "overloaded" in grade.explanation
    assert len(judge_server.requests) == 2


async def test_connection_reset_is_a_transport_error(judge_server, service, make_settings):
    judge_server.default = Reply.reset_connection()
    grade = await service.grade(closed_qa("q"), QA, make_settings(max_retries=1))
    assert (grade.state, grade.reason) == TRANSPORT_ERROR
    assert len(judge_server.requests) == 2


async def test_connection_refused_is_a_transport_error(service, make_settings, judge_server):
    port = judge_server.port
    judge_server.stop()
    grade = await service.grade(closed_qa("q"), QA, make_settings(base_url=f"http://127.0.0.1:{port}/v1",
                                                                  max_retries=0))
    assert (grade.state, grade.reason) == TRANSPORT_ERROR
    assert "ConnectError" in grade.explanation


async def test_a_slow_judge_times_out(judge_server, service, make_settings):
    judge_server.default = Reply.tool("Y", delay_s=1.0)
    grade = await service.grade(closed_qa("q"), QA, make_settings(timeout_ms=200))
    assert (grade.state, grade.reason) == (AssertionState.UNAVAILABLE, UnavailableReason.JUDGE_TIMEOUT)
    assert "timeout_ms=200" in grade.explanation


async def test_client_errors_during_grading_are_not_retried(judge_server, service, make_settings):
    judge_server.default = Reply.error(400, "tools are not supported")
    grade = await service.grade(closed_qa("q"), QA, make_settings())
    assert (grade.state, grade.reason) == TRANSPORT_ERROR
    assert "400" in grade.explanation and "tools are not supported" in grade.explanation
    assert len(judge_server.requests) == 1


@pytest.mark.parametrize(("reply", "says"), [
    (Reply.tool("Z"), "unknown choice 'Z'"),
    (Reply.tool("", ), "no choice"),
    (Reply.tool("Y", arguments="{not json"), "not JSON"),
    (Reply.tool("Y", arguments='["Y"]'), "not a JSON object"),
    (Reply.text("Yes, it is clear."), "no JSON object"),
    (Reply.content("0.7"), "unknown choice"),
    (Reply.raw("<html>oops</html>"), "not a JSON object"),
    (Reply.raw({"choices": []}), "no choices"),
    (Reply.raw({"choices": [{"message": None}]}), "no message"),
    # content parts whose text is no text: the judge's fault (was judge-evaluator-error, a TypeError)
    (Reply.raw({"choices": [{"message": {"content": [{"type": "text", "text": 5}]}}]}), "is not text"),
])
async def test_unusable_answers_are_errored_invalid_response(
    judge_server, service, make_settings, reply, says,
):
    judge_server.default = reply
    grade = await service.grade(closed_qa("q"), QA, make_settings())
    assert (grade.state, grade.reason) == (AssertionState.ERRORED, ErroredReason.JUDGE_INVALID_RESPONSE)
    assert grade.measurement is None and says in grade.explanation
    assert grade.audit is not None and len(judge_server.requests) == 1


async def test_an_out_of_scale_factuality_letter_is_never_clipped(judge_server, service, make_settings):
    judge_server.default = Reply.tool("Y")  # a closed_qa letter is not a factuality category
    grade = await service.grade(factuality("r"), QA, make_settings())
    assert grade.state == AssertionState.ERRORED and grade.measurement is None


async def test_any_other_failure_is_an_evaluator_error(judge_server, service, make_settings, monkeypatch):
    import niceeval_cli.judge._grade as grade_module

    def broken(*args, **kwargs):
        raise RuntimeError("prompt renderer exploded")

    monkeypatch.setattr(grade_module, "request_body", broken)
    grade = await service.grade(closed_qa("q"), QA, make_settings())
    assert (grade.state, grade.reason) == (AssertionState.ERRORED, ErroredReason.JUDGE_EVALUATOR_ERROR)
    assert "RuntimeError: prompt renderer exploded" in grade.explanation


async def test_unavailable_material_is_unavailable_with_its_own_reason(judge_server, service, make_settings):
    grade = await service.grade(closed_qa("q"), Fact.unavailable("log-missing"), make_settings())
    assert (grade.state, grade.reason) == (AssertionState.UNAVAILABLE, "log-missing")
    grade = await service.grade(closed_qa("q"), Material.partial([1], "stream-open"), make_settings())
    assert (grade.state, grade.reason) == (AssertionState.UNAVAILABLE, "stream-open")
    assert judge_server.requests == []


# ---- capacity, audit, evidence and redaction -------------------------------------------------

async def test_material_over_capacity_is_unavailable_and_nothing_is_sent(
    judge_server, service, make_settings,
):
    material = {"input": "q", "output": "é" * 60}  # 120 UTF-8 bytes of text alone
    grade = await service.grade(closed_qa("q", max_material_bytes=100), material, make_settings())
    assert (grade.state, grade.reason) == (AssertionState.UNAVAILABLE,
                                           UnavailableReason.MATERIAL_CAPACITY_EXCEEDED)
    assert "max_material_bytes=100" in grade.explanation
    assert judge_server.requests == []
    ok = await service.grade(closed_qa("q", max_material_bytes=200), material, make_settings())
    assert ok.state == AssertionState.MEASURED


async def test_material_exactly_at_capacity_is_sent(judge_server, service, make_settings):
    material = {"output": "abc"}
    size = len(json.dumps(material, separators=(",", ":")).encode())
    grade = await service.grade(closed_qa("q", max_material_bytes=size), material, make_settings())
    assert grade.state == AssertionState.MEASURED


async def test_audit_holds_request_messages_and_raw_response(judge_server, service, make_settings):
    judge_server.default = Reply.tool("N", "misses the window")
    grade = await service.grade(closed_qa("States the window?"), QA, make_settings())
    audit = json.loads(grade.audit or "")
    assert audit["request"]["messages"][1]["content"].count("You have 30 days.") == 1
    arguments = audit["response"]["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]
    assert json.loads(arguments)["reasoning"] == "misses the window"


async def test_audit_is_trimmed_to_max_audit_bytes_but_the_request_is_not(
    judge_server, service, make_settings,
):
    material = {"input": "q", "output": "long answer " * 2000}
    grade = await service.grade(closed_qa("q", max_audit_bytes=4000), material, make_settings())
    assert grade.state == AssertionState.MEASURED
    assert len((grade.audit or "").encode()) <= 4000 and "bytes trimmed]" in (grade.audit or "")
    assert judge_server.requests[0].json["messages"][1]["content"].count("long answer") == 2000


async def test_evidence_is_the_material_trimmed_to_64_kib(judge_server, service, make_settings):
    material = {"input": "q", "output": "x" * 100_000}
    grade = await service.grade(closed_qa("q"), material, make_settings())
    evidence = json.loads(grade.evidence or "")
    assert evidence["input"] == "q" and "bytes trimmed]" in evidence["output"]
    assert len((grade.evidence or "").encode()) <= 64 * 1024


async def test_secrets_never_reach_audit_evidence_or_explanation(
    judge_server, service, make_settings, judge_key,
):
    leaky = f"my key is {judge_key}, header Authorization: Bearer abc.def-123 and sk-ABCDEFGHIJKLMNOP1234"
    judge_server.default = Reply.tool("Y", f"I saw {judge_key} and sk-ZYXWVUTSRQPONMLK9876 in there")
    grade = await service.grade(closed_qa("q"), {"input": "q", "output": leaky}, make_settings())
    assert grade.state == AssertionState.MEASURED
    stored = " ".join([grade.audit or "", grade.evidence or "", grade.explanation])
    for secret in (judge_key, "abc.def-123", "sk-ABCDEFGHIJKLMNOP1234", "sk-ZYXWVUTSRQPONMLK9876"):
        assert secret not in stored
    assert "[redacted]" in grade.evidence and "[redacted]" in grade.explanation  # type: ignore[operator]
    # what was sent to the judge is the material itself, unredacted
    assert "sk-ABCDEFGHIJKLMNOP1234" in judge_server.requests[0].json["messages"][1]["content"]


async def test_the_key_is_redacted_from_error_details(judge_server, service, make_settings, judge_key):
    judge_server.default = Reply.error(500, f"bad key {judge_key}")
    grade = await service.grade(closed_qa("q"), QA, make_settings(max_retries=0))
    assert judge_key not in grade.explanation and judge_key not in (grade.audit or "")
    assert "[redacted]" in grade.explanation
