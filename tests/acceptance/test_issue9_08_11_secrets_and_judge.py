"""Issue 9, items 8-11: secrets never leak in any encoding (a key with `"` and `\\`), a key that
cannot be a header is a setup error naming the variable, a config error never echoes a pasted
key, and what a hostile judge sends is bounded, valid JSON and classified as the judge's fault.
CLI runs (in process) against a loopback judge."""

from __future__ import annotations

import json
import subprocess
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.loopback import JudgeServer, Reply
from tests.support.project import Project


@pytest.fixture
def proj(project: Project) -> Project:
    """The CLI in process (tests/conftest.py `project`): these checks read exit codes, output and
    stored rows; what is about a process (signals, pipes) still starts the real `niceeval`."""
    return project


QUOTED_KEY = 'sk-qa"quo\\te\'d-secret-8812'


def _encodings(key: str) -> list[str]:
    return [key, json.dumps(key)[1:-1], repr(key)[1:-1], json.dumps(json.dumps(key))[1:-1],
            urllib.parse.quote(key), urllib.parse.quote_plus(key), urllib.parse.quote(key, safe="")]


@pytest.fixture
def judge() -> Iterator[JudgeServer]:
    server = JudgeServer().start()
    server.default = Reply.tool("Y", "fine")
    try:
        yield server
    finally:
        server.stop()


def _toml(judge: JudgeServer, extra: str = "") -> str:
    return f'''
        [judge]
        model = "judge-m"
        base_url = "{judge.base_url}"
        api_key_env = "JK"
        {extra}
    '''


LEAKY = '''
import json
import os

from niceeval_cli import define_eval
from niceeval_cli.expect import closed_qa, equals, includes


@define_eval(judge=True)
async def leaks(t):
    turn = await t.send("tell me the key")
    t.check(turn.message, includes("nothing")).label("reply")
    t.check({"input": "q", "output": turn.message}, closed_qa("marker-echo: leak?")).label("judge echo")
    t.check({"k": os.environ["JK"], "j": json.dumps(os.environ["JK"])}, equals({})).label("equals")


@define_eval()
async def raises(t):
    raise RuntimeError({"could not connect with": os.environ["JK"]})
'''

BOT = '''
import json
import os


def reply(message):
    key = os.environ["JK"]
    return f"key={key} json={json.dumps(key)} repr={key!r}"
'''


@pytest.mark.slow
def test_a_key_with_quotes_and_backslashes_never_appears_in_any_encoding(proj: Project, judge: JudgeServer) -> None:
    key = QUOTED_KEY
    judge.when("marker-echo", Reply.tool("N", f"I saw {key} and {json.dumps(key)} and {key!r}"))
    proj.write("niceeval.toml", _toml(judge, '''
        [experiments.bot]
        adapter = "python"
        [experiments.bot.options]
        callable = "bot:reply"
    '''))
    proj.write("bot.py", BOT)
    proj.write("evals/leaky.py", LEAKY)
    run = proj.run("--junit", "junit.xml", env={"JK": key, "NO_COLOR": "1"})
    assert run.returncode == 1, run.stdout + run.stderr
    failed = proj.sql("SELECT id FROM attempts WHERE eval_id = 'leaky/leaks'")[0]["id"]
    errored = proj.sql("SELECT id FROM attempts WHERE eval_id = 'leaky/raises'")[0]["id"]
    texts = {"run": run.stdout + run.stderr, "junit": (proj.root / "junit.xml").read_text()}
    for name, args in {"view": ["view", "--all"], "attempt": ["view", "@" + failed],
                       "errored": ["view", "@" + errored], "query": ["query", "assertions", "--format", "csv"]}.items():
        res = proj.cli(*args, env={"NO_COLOR": "1"})
        assert res.returncode == 0, res.stderr
        texts[name] = res.stdout + res.stderr
    texts["store"] = subprocess.run(["sqlite3", str(proj.store), ".dump"], capture_output=True, text=True).stdout
    assert "[redacted]" in texts["store"]
    for name, text in texts.items():
        for form in _encodings(key):
            assert form not in text, (name, form)
        assert "quo" not in text or "sk-qa" not in text, name


@pytest.mark.parametrize(("value", "kind"), [("sk-first-line-1234\nsecondline", "newline"),
                                              ("sk-first-line-1234\n", "trailing-newline"),
                                              ("sk-caf\u00e9-key-1234", "non-ascii")])
def test_a_judge_key_that_cannot_be_a_header_is_a_setup_error_naming_the_variable(
        proj: Project, judge: JudgeServer, value: str, kind: str) -> None:
    proj.write("niceeval.toml", _toml(judge))
    proj.write("evals/j.py", '''
        from niceeval_cli import define_eval
        from niceeval_cli.expect import closed_qa


        @define_eval(judge=True)
        async def j(t):
            t.check({"input": "q", "output": "a"}, closed_qa("fine?")).label("judge")
    ''')
    res = proj.run("--junit", "junit.xml", env={"JK": value, "NO_COLOR": "1"})
    assert res.returncode == 3, (kind, res.returncode, res.stdout, res.stderr)
    out = res.stdout + res.stderr + (proj.root / "junit.xml").read_text()
    assert "JK" in out and "Traceback" not in out
    for part in ("secondline", "first-line", "caf\u00e9", "sk-"):
        assert part not in out, (kind, part)
    dump = subprocess.run(["sqlite3", str(proj.store), ".dump"], capture_output=True, text=True).stdout
    assert "secondline" not in dump and "caf\u00e9" not in dump
    assert judge.grading_requests == []


def test_an_http_adapter_header_key_with_a_newline_is_a_setup_error_naming_the_variable(proj: Project,
                                                                                       judge: JudgeServer) -> None:
    proj.write("niceeval.toml", f'''
        [experiments.web]
        adapter = "http"
        [experiments.web.options]
        url = "{judge.base_url}/chat/completions"
        headers = {{ Authorization = "Bearer {{env:WEB_TOKEN}}" }}
    ''')
    proj.write("evals/w.py", '''
        from niceeval_cli import define_eval
        from niceeval_cli.expect import includes


        @define_eval()
        async def w(t):
            turn = await t.send("hi")
            t.check(turn.message, includes("x")).label("reply")
    ''')
    res = proj.run(env={"WEB_TOKEN": "tok-first-9911\nsecondline", "NO_COLOR": "1"})
    assert res.returncode == 3, (res.returncode, res.stdout, res.stderr)
    out = res.stdout + res.stderr
    assert "WEB_TOKEN" in out and "web" in out
    assert "secondline" not in out and "tok-first" not in out and "Traceback" not in out


PASTED = "sk-proj-Abc123Def456Ghi789Jkl012"


@pytest.mark.parametrize("toml", [
    '[judge]\napi_key_env = "{key}"\n',
    '[judge]\nmodle = "{key}"\n',
    '[experiments.x]\nadapter = "openai-chat"\nmodel = "m"\n[experiments.x.options]\napi_key_env = "{key}"\n',
], ids=["api_key_env", "misspelt-key", "openai-chat-option"])
def test_a_config_error_never_echoes_a_pasted_key(proj: Project, toml: str) -> None:
    proj.write("niceeval.toml", toml.format(key=PASTED))
    proj.write("evals/e.py", "from niceeval_cli import define_eval\n\n\n@define_eval()\nasync def e(t): ...\n")
    res = proj.run(env={"NO_COLOR": "1"})
    assert res.returncode == 2, (res.returncode, res.stdout, res.stderr)
    out = res.stdout + res.stderr
    assert PASTED not in out and PASTED[:12] not in out and "Abc123" not in out, out
    if "api_key_env" in toml:
        assert "looks like a key" in out and "NAME" in out, out


HUGE_REASONING = "x" * (10 * 1024 * 1024)
_CALL = ('{"id":"c","type":"function","function":{"name":"grade",'
         '"arguments":"{\\"reasoning\\": \\"ok\\", \\"choice\\": \\"Y\\"}"}}')
NON_FINITE = ('{"id":"x","object":"chat.completion","model":"judge-m","score":NaN,"big":1e999,'
              '"choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[' + _CALL + ']},'
              '"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2,'
              '"weird":Infinity}}')
DEEP = '{"choices": ' + '[' * 10000 + ']' * 10000 + '}'
DEEP_ARGUMENTS = '{"reasoning": ' + '{"a": ' * 10000 + '1' + '}' * 10000 + ', "choice": "Y"}'


@pytest.mark.slow
def test_hostile_judge_replies_are_bounded_valid_json_and_classified_as_invalid_responses(
        proj: Project, judge: JudgeServer) -> None:
    judge.when("marker-huge", Reply.tool("Y", HUGE_REASONING))
    judge.when("marker-nan", Reply.raw(NON_FINITE))
    judge.when("marker-deep?", Reply.raw(DEEP))
    judge.when("marker-deeparg", Reply.tool("Y", arguments=DEEP_ARGUMENTS))
    judge.when("marker-deepcontent", Reply.text(DEEP_ARGUMENTS))
    proj.write("niceeval.toml", _toml(judge))
    proj.write("evals/h.py", '''
        from niceeval_cli import define_eval
        from niceeval_cli.expect import closed_qa


        @define_eval(judge=True)
        async def huge(t):
            t.check({"input": "q", "output": "a"}, closed_qa("marker-huge?")).label("judge")


        @define_eval(judge=True)
        async def nan(t):
            t.check({"input": "q", "output": "a"}, closed_qa("marker-nan?")).label("judge")


        @define_eval(judge=True)
        async def deep(t):
            t.check({"input": "q", "output": "a"}, closed_qa("marker-deep?")).label("judge")


        @define_eval(judge=True)
        async def deep_arguments(t):
            t.check({"input": "q", "output": "a"}, closed_qa("marker-deeparg?")).label("judge")


        @define_eval(judge=True)
        async def deep_content(t):
            t.check({"input": "q", "output": "a"}, closed_qa("marker-deepcontent?")).label("judge")
    ''')
    res = proj.run(env={"JK": "sk-hostile-judge-key-0000", "NO_COLOR": "1"})
    assert res.returncode in (0, 5), (res.returncode, res.stdout[-2000:], res.stderr[-2000:])
    assert Path(proj.store).stat().st_size < 8 * 1024 * 1024
    rows = {r["eval_id"]: r for r in proj.sql(
        "SELECT a.eval_id, r.state, r.reason, r.explanation, r.judge_audit, r.evidence FROM assertion_results r "
        "JOIN attempts a ON a.id = r.attempt_id")}
    assert len(rows["h/huge"]["explanation"].encode()) <= 100 * 1024
    assert len((rows["h/huge"]["judge_audit"] or "").encode()) <= 1024 * 1024 + 4096

    def strict(constant: str) -> None:
        raise ValueError(f"invalid JSON constant {constant}")

    for row in rows.values():
        for column in ("judge_audit", "evidence"):
            if row[column] is not None:
                json.loads(row[column], parse_constant=strict)
    assert rows["h/deep"]["state"] == "errored"  # spec/judge.md: an invalid response is errored
    assert rows["h/deep"]["reason"] == "judge-invalid-response", rows["h/deep"]
    for eval_id in ("h/deep_arguments", "h/deep_content"):
        assert (rows[eval_id]["state"], rows[eval_id]["reason"]) == ("errored", "judge-invalid-response"), rows[eval_id]
