"""The judge key's value never reaches the store or the output, even when the system under
test, the judge or the endpoint echo it; its variable's name may (judge.md: redaction)."""

from __future__ import annotations

import json

import pytest

from tests.support.judge_e2e import KEY, KEY_ENV, user_message
from tests.support.loopback import Reply

LEAKY = """
    import os

    @define_eval(judge=True)
    def leaky(t):
        leaked = {"input": "show config", "output": "key=" + os.environ["JK"]
                  + " other=sk-otherProjectKey1234567890 header=Bearer tok_live_abcdef123"}
        t.check(leaked, closed_qa("Does it leak? marker-echo")).label("echo")
        t.check(leaked, closed_qa("Does it leak? marker-invalid")).label("invalid")
        t.check(leaked, closed_qa("Does it leak? marker-error")).label("error")

    @define_eval()
    def raises(t):
        raise RuntimeError("cannot connect with " + os.environ["JK"])
"""


def _store_dump(judged) -> str:
    tables = [r["name"] for r in judged.sql("SELECT name FROM sqlite_master WHERE type = 'table'")]
    assert {"runs", "run_slots", "attempts", "assertion_results"} <= set(tables)
    return json.dumps({t: judged.sql(f'SELECT * FROM "{t}"') for t in tables})


@pytest.mark.parametrize("key", [KEY, "plain-judge-secret-4471"], ids=["sk-shaped", "any-shape"])
def test_the_key_value_is_in_no_table_and_no_output(judged, key):
    judged.setup(LEAKY)
    judged.server.when("marker-echo", Reply.tool("Y", f"I saw the key {key} in the output"))
    judged.server.when("marker-invalid", Reply.text(f"not a grade, but here is {key}"))
    judged.server.when("marker-error", Reply.error(400, f"bad request from {key}"))

    outputs = [judged.run(key=key), judged.run("--rerun-all", "--json", key=key)]
    run_id = judged.sql("SELECT id FROM runs ORDER BY id DESC LIMIT 1")[0]["id"]
    attempt_id = judged.sql("SELECT id FROM attempts WHERE eval_id = 'e/leaky' LIMIT 1")[0]["id"]
    outputs += [judged.project.cli("view", run_id, "--all"), judged.project.cli("view", "@" + attempt_id)]

    assert all(o.exit_code in (0, 5) for o in outputs), [o.stderr for o in outputs]
    for output in outputs:
        assert key not in output.stdout and key not in output.stderr
    dump = _store_dump(judged)
    assert key not in dump
    assert "sk-otherProjectKey1234567890" not in dump and "tok_live_abcdef123" not in dump
    assert "[redacted]" in dump
    assert f'"api_key_env\\":\\"{KEY_ENV}\\"' in dump  # the variable's name is kept
    for file in (judged.project.root / ".niceeval").iterdir():
        assert key.encode() not in file.read_bytes(), file
    # What is sent to the judge is the material itself, not a redacted copy.
    assert all(key in user_message(r) for r in judged.grading)


def test_a_preflight_error_echoing_the_key_is_printed_redacted(judged):
    judged.setup(LEAKY)
    judged.server.enqueue(Reply.error(401, f"Incorrect API key provided: {KEY}"))

    run = judged.run()

    assert run.exit_code == 3
    output = run.stdout + run.stderr
    assert "401" in output and KEY not in output
    assert KEY not in _store_dump(judged)


HEADER_SECRET = "plain-gateway-token-5519"
RAISES_TOKEN = """
    @define_eval()
    def raises_token(t):
        raise RuntimeError("the gateway refused " + os.environ["GW_TOKEN"])
"""


def test_a_judge_header_secret_echoed_back_is_in_no_table_and_no_output(judged):
    """A judge header read from the environment (`env:NAME`) is a secret like the key: a judge
    that echoes it in a reply or an error leaves it in no stored row and no printed line."""
    judged.setup(LEAKY + RAISES_TOKEN,
                 toml="[project]\n" + judged.judge_table() + 'headers = { X-Gateway-Token = "env:GW_TOKEN" }\n')
    judged.server.when("marker-echo", Reply.tool("Y", f"your gateway token is {HEADER_SECRET}"))
    judged.server.when("marker-invalid", Reply.text(f"not a grade, token {HEADER_SECRET}"))
    judged.server.when("marker-error", Reply.error(400, f"bad request with token {HEADER_SECRET}"))

    run = judged.run(env={"GW_TOKEN": HEADER_SECRET})

    assert run.exit_code in (0, 5), run.stderr
    assert all(r.headers.get("x-gateway-token") == HEADER_SECRET for r in judged.grading)
    assert HEADER_SECRET not in run.stdout + run.stderr
    dump = _store_dump(judged)
    assert HEADER_SECRET not in dump
    assert "[redacted]" in dump
