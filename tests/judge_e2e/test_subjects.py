"""What a judge may grade and what it is sent (judge.md: Subjects, Capability): the `judge=`
declaration, adapter material (all selected items), and `max_material_bytes`."""

from __future__ import annotations

import json

import pytest

from tests.support.judge_e2e import line_of, user_message
from tests.support.loopback import Reply

CHAT_APP = """
from niceeval_cli import Material, define_adapter
from niceeval_cli.expect import define_material_match, satisfies

MESSAGES = [
    {"role": "assistant", "text": "Hello, how can I help? marker-hello"},
    {"role": "user", "text": "I want a refund. marker-user-only"},
    {"role": "assistant", "text": "Your refund is on its way. marker-refund"},
    {"role": "assistant", "text": "Anything else? marker-unheard", "heard": False},
]


def create(ctx):
    kind = ctx.experiment.options.get("material", "complete")
    if kind == "partial":
        return {"messages": Material.partial(MESSAGES, "stream-cut-short")}
    return {"messages": Material.complete(MESSAGES)}


adapter = define_adapter(name="chat-app", create=create)

replies = define_material_match(
    name="assistant_replies",
    read=lambda facts: facts["messages"],
    match=satisfies("from the assistant", lambda m: m["role"] == "assistant"),
)
"""

MATERIAL_EVAL = """
    from chat_app import adapter, replies

    @adapter.define_eval(judge=True)
    def polite(t):
        t.check(replies, closed_qa("Are the replies polite?").at_least(1)).gate().label("polite")
        t.closed_qa(replies, "Do the replies answer the refund request?").label("answers")
"""


@pytest.mark.parametrize("registration", [
    't.check(QA, closed_qa("Names the capital?")).label("capital")',
    't.closed_qa(QA, "Names the capital?").label("capital")',
], ids=["check", "sugar"])
@pytest.mark.parametrize("declaration", ["", "judge=False"])
def test_a_judge_assertion_without_a_judge_declaration_is_an_authoring_error_at_the_call(
        judged, registration, declaration):
    judged.setup(f"""
        @define_eval({declaration})
        def undeclared(t):
            {registration}
    """)

    run = judged.run()

    assert run.exit_code == 5
    attempt = judged.one_attempt()
    assert (attempt["state"], attempt["reason"]) == ("errored", "authoring-error")
    assert "judge=True" in attempt["error"]
    assert f"evals/e.py:{line_of(judged, 'Names the capital')}" in attempt["error"]
    assert judged.server.requests == []


def test_a_material_match_subject_sends_every_selected_item_and_nothing_else(judged):
    judged.setup(MATERIAL_EVAL, files={"chat_app.py": CHAT_APP})

    run = judged.run()

    assert run.exit_code == 0, run.stdout + run.stderr
    assert len(judged.grading) == 2
    for request in judged.grading:
        sent = user_message(request)
        for selected in ("marker-hello", "marker-refund", "marker-unheard"):
            assert selected in sent
        assert "marker-user-only" not in sent
    evidence = judged.result("polite")["evidence"]
    assert [m["text"].split()[-1] for m in evidence] == ["marker-hello", "marker-refund", "marker-unheard"]
    assert judged.result("answers")["state"] == "measured"


def test_partial_material_is_not_graded(judged):
    toml = "[project]\n" + judged.judge_table() + '[experiments.default.options]\nmaterial = "partial"\n'
    judged.setup(MATERIAL_EVAL, toml=toml, files={"chat_app.py": CHAT_APP})

    judged.run()

    row = judged.result("polite")
    assert (row["state"], row["reason"]) == ("unavailable", "stream-cut-short")
    assert judged.grading == []


@pytest.mark.parametrize("subject", ["QA", "replies"])
def test_material_over_max_material_bytes_is_unavailable_and_never_sent(judged, subject):
    judged.setup(f"""
        from chat_app import adapter, replies

        @adapter.define_eval(judge=True)
        def big(t):
            t.check({subject}, closed_qa("Is it fine?", max_material_bytes=40).at_least(1)).gate().label("too big")
            t.check({subject}, closed_qa("Is it fine?", max_material_bytes=4000).at_least(1)).gate().label("fits")
    """, files={"chat_app.py": CHAT_APP})

    run = judged.run()

    assert run.exit_code == 5
    row = judged.result("too big")
    assert (row["state"], row["reason"], row["judge_tokens"]) == ("unavailable", "material-capacity-exceeded", 0)
    assert "40" in row["explanation"]
    assert judged.result("fits")["state"] == "met"
    assert len(judged.grading) == 1, "only the material that fits is sent"
    assert judged.one_attempt()["reason"] == "evidence-unavailable"


def test_the_audit_is_trimmed_to_max_audit_bytes_but_the_judge_gets_everything(judged):
    judged.setup("""
        BIG = {"input": "Summarise the log", "output": "line of the log " * 5000 + "marker-end-of-log"}

        @define_eval(judge=True)
        def audited(t):
            t.check(BIG, summarizes("the source log", max_audit_bytes=4096)).label("summary")
    """)

    assert judged.run().exit_code == 0
    stored = judged.sql("SELECT judge_audit, evidence FROM assertion_results WHERE label = 'summary'")[0]
    row = {**judged.result("summary"), **stored}  # the stored text (query json decodes JSON columns)
    audit = row["judge_audit"]
    assert len(audit.encode()) <= 4096
    assert set(json.loads(audit)) == {"request", "response"}  # still valid JSON, trimmed inside
    assert set(json.loads(audit)["request"]) == {"model", "messages"}
    assert "bytes trimmed]" in audit  # the visible marker
    assert row["measurement"] == 1.0
    evidence = row["evidence"]  # the ~80 KB material, kept within 64 KiB
    assert len(evidence.encode()) <= 64 * 1024 and "trimmed" in evidence
    (request,) = judged.grading
    assert "marker-end-of-log" in user_message(request)  # what is sent is never trimmed


def test_max_concurrency_cannot_be_set_per_eval(judged):
    judged.setup("""
        @define_eval(judge={"max_concurrency": 4})
        def per_eval(t):
            t.check(QA, closed_qa("Names the capital?")).label("capital")
    """)

    run = judged.run()

    assert run.exit_code == 2
    assert "max_concurrency" in run.stderr
    assert judged.server.requests == []


def test_an_output_holding_a_lone_surrogate_is_graded_with_it_shown_as_u_fffd(judged):
    """Text decoded with `surrogateescape` (bytes an app could not decode) holds lone surrogates,
    which UTF-8 cannot encode: the grading request was never built and the assertion read
    `judge-evaluator-error` (blaming NiceEval). It is sent as U+FFFD, as the store keeps it."""
    judged.setup('''
        @define_eval(judge=True)
        def gated(t):
            qa = {"input": "q", "output": "Paris \\udcff here"}
            t.check(qa, closed_qa("Names the capital?").at_least(1)).gate().label("capital")
    ''')
    judged.server.default = Reply.tool("Y", "meets it")

    run = judged.run()

    row = judged.result("capital")
    assert (row["state"], row["reason"]) == ("met", None), row
    assert run.exit_code == 0
    assert "Paris \ufffd here" in user_message(judged.grading[-1])
