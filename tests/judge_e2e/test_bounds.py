"""Whatever the judge answers, what is stored is bounded, valid JSON and classed by whose fault
it is (issue 9, items 2 and 11)."""

from __future__ import annotations

import contextlib
import gc
import json
import sqlite3
from collections.abc import Iterator

from niceeval_cli.expect._judge import DEFAULT_MAX_AUDIT_BYTES
from niceeval_cli.judge._grade import EXPLANATION_MAX_BYTES
from tests.support.loopback import Reply

ONE = """
    @define_eval(judge=True)
    def graded(t):
        t.check(QA, closed_qa("Is it Paris?"))
"""


def _stored(judged) -> dict:
    """The one assertion row and its attempt exactly as the store file holds them."""
    files = [p for p in (judged.project.root / ".niceeval").iterdir() if p.suffix == ".db"]
    with sqlite3.connect(files[0]) as db:
        db.row_factory = sqlite3.Row
        rows = [dict(r) for r in db.execute("SELECT * FROM assertion_results")]
        attempts = [dict(r) for r in db.execute("SELECT * FROM attempts")]
    assert len(rows) == 1 and len(attempts) == 1, (rows, attempts)
    return {"result": rows[0], "attempt": attempts[0]}


def _strict_json(text: str) -> object:
    def refuse(name: str) -> object:
        raise ValueError(f"invalid JSON constant {name}")
    return json.loads(text, parse_constant=refuse)


def test_a_ten_megabyte_reasoning_is_stored_within_the_bound_with_a_marker(judged):
    judged.setup(ONE)
    judged.server.default = Reply.tool("Y", "because " + "x" * (10 * 1024 * 1024))

    run = judged.run()

    assert run.exit_code == 0, run.stderr
    row = _stored(judged)["result"]
    assert row["state"] == "measured" and row["measurement"] == 1.0
    explanation = row["explanation"]
    assert len(explanation.encode()) <= EXPLANATION_MAX_BYTES
    assert explanation.startswith("Y: because xxx") and "trimmed" in explanation
    assert len(row["judge_audit"].encode()) <= DEFAULT_MAX_AUDIT_BYTES
    _strict_json(row["judge_audit"])


def test_non_finite_numbers_in_the_judge_body_are_stored_as_valid_json(judged):
    judged.setup(ONE)
    args = json.dumps({"choice": "Y", "reasoning": "fine"})
    body = ('{"choices": [{"message": {"role": "assistant", "content": null, "tool_calls": '
            '[{"id": "c", "type": "function", "function": {"name": "grade", "arguments": '
            + json.dumps(args) + '}}]}}], "score": NaN, "hi": Infinity, "lo": -Infinity}')
    judged.server.default = Reply.raw(body)

    run = judged.run()

    assert run.exit_code == 0, run.stderr
    row = _stored(judged)["result"]
    audit = _strict_json(row["judge_audit"])
    assert isinstance(audit, dict)
    assert audit["response"]["score"] == "NaN" and audit["response"]["hi"] == "Infinity"
    assert audit["response"]["lo"] == "-Infinity"


@contextlib.contextmanager
def _no_collection() -> Iterator[None]:
    """No cyclic garbage collection while a run (in process) parses JSON nested to the recursion
    limit: a collection there calls the collector's callbacks at that depth — hypothesis installs
    one in every pytest process that ran a property test — and the RecursionError it raises is
    reported through pytest's unraisable-exception hook, which cannot format it at that depth
    either ("Failed to process unraisable exception": the test process's failure, not the run's)."""
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def test_a_body_nested_ten_thousand_deep_is_an_invalid_response_not_our_bug(judged):
    judged.setup(ONE)
    judged.server.default = Reply.raw("[" * 10_000 + "]" * 10_000)

    with _no_collection():
        run = judged.run()

    assert run.exit_code == 5, run.stdout + run.stderr
    row = _stored(judged)["result"]
    assert (row["state"], row["reason"]) == ("errored", "judge-invalid-response")
    assert "nested deeper than" in row["explanation"]
    _strict_json(row["judge_audit"])


def test_a_body_nested_just_under_the_parser_limit_is_stored_as_valid_json(judged):
    judged.setup(ONE)
    deep = "[" * 900 + "]" * 900
    judged.server.default = Reply.raw('{"choices": [{"message": {"content": "x"}}], "deep": ' + deep + "}")

    with _no_collection():
        run = judged.run()

    assert run.exit_code == 5, run.stdout + run.stderr
    row = _stored(judged)["result"]
    assert (row["state"], row["reason"]) == ("errored", "judge-invalid-response")
    _strict_json(row["judge_audit"])


def test_an_impossible_token_count_is_treated_as_unreported_and_the_run_seals(judged):
    judged.setup({"e": ONE, "f": """
    @define_eval(judge=True)
    def also(t):
        t.check(QA, closed_qa("Is it really Paris?"))
"""})
    judged.server.when("really", Reply.tool("Y", usage={"prompt_tokens": 5, "completion_tokens": 5,
                                                          "total_tokens": 10}))
    judged.server.default = Reply.tool("Y", usage={"prompt_tokens": 10**30, "completion_tokens": 1,
                                                   "total_tokens": 10**30 + 1})

    run = judged.run()

    assert run.exit_code == 0, run.stdout + run.stderr
    tokens = {r["eval_id"]: r["judge_tokens"] for r in judged.attempts()}
    assert tokens == {"e": 0, "f": 10}  # one eval per module: the module is its id
    assert judged.sql("SELECT status FROM runs")[0]["status"] == "finished"



def test_a_lone_surrogate_in_the_reasoning_is_stored_replaced_and_the_grade_kept(judged):
    judged.setup(ONE)
    arguments = '{"choice": "Y", "reasoning": "lone \\ud800 here"}'  # a JSON escape of a lone surrogate
    judged.server.default = Reply.tool("Y", arguments=arguments)

    run = judged.run()

    assert run.exit_code == 0, run.stdout + run.stderr
    row = _stored(judged)["result"]
    assert (row["state"], row["measurement"]) == ("measured", 1.0)
    assert row["explanation"] == "Y: lone \ufffd here"
    _strict_json(row["judge_audit"])
