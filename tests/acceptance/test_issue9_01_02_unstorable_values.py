"""Issue 9, items 1 and 2: text SQLite cannot encode (lone surrogates) and integers it cannot hold
(usage of 10**30) never abort a run — from test code, the `python` and `http` adapters and a judge.

One real run (module fixture) feeds every check: a subprocess `niceeval run`, a loopback judge and
a loopback service for the `http` adapter, then the store file read with sqlite3.
"""

from __future__ import annotations

import json
import subprocess
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support.loopback import JudgeServer, Loopback, Reply
from tests.support.project import Project

HUGE = 10**30

BOT = '''
def reply(message: str):
    if "huge usage" in message:
        return {"message": "ok", "usage": {"input_tokens": 10**30, "output_tokens": 7}}
    return "lone \\ud800 from the bot"
'''

EVALS = '''
from niceeval_cli import define_eval
from niceeval_cli.expect import closed_qa, includes


@define_eval()
async def in_test_code(t):
    t.check("lone \\ud800 in code", includes("lone")).label("code \\udfff label")


@define_eval()
async def plain(t):
    t.check("fine", includes("fine")).label("plain")
'''

PY_EVALS = '''
from niceeval_cli import define_eval
from niceeval_cli.expect import closed_qa, includes


@define_eval()
async def reply_surrogate(t):
    turn = await t.send("surrogate please")
    t.check(turn.message, includes("lone")).label("python reply")


@define_eval()
async def reply_huge_usage(t):
    turn = await t.send("huge usage please")
    t.check(turn.message, includes("ok")).label("usage reply")


@define_eval(judge=True)
async def judge_surrogate(t):
    t.check({"input": "q", "output": "a"}, closed_qa("marker-surrogate: fine?")).label("judge surrogate")


@define_eval(judge=True)
async def judge_huge_usage(t):
    t.check({"input": "q", "output": "a"}, closed_qa("marker-usage: fine?")).label("judge usage")
'''

WEB_EVALS = '''
from niceeval_cli import define_eval
from niceeval_cli.expect import includes


@define_eval()
async def http_surrogate(t):
    turn = await t.send("hello")
    t.check(turn.message, includes("lone")).label("http reply")
'''


@dataclass
class Outcome:
    proj: Project
    result: subprocess.CompletedProcess[str]

    def attempts(self) -> dict[str, dict[str, Any]]:
        return {f'{r["experiment_id"]}:{r["eval_id"]}': r for r in self.proj.sql("SELECT * FROM attempts")}


@pytest.fixture(scope="module")
def outcome(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Outcome]:
    judge = JudgeServer().start()
    judge.default = Reply.tool("Y", "fine")
    judge.when("marker-surrogate", Reply.tool("Y", "lone \ud800 reasoning"))
    judge.when("marker-usage", Reply.tool("Y", "fine", usage={"prompt_tokens": HUGE, "completion_tokens": 1,
                                                              "total_tokens": HUGE}))
    service = Loopback(lambda m, p, b: (200, b'{"message": "lone \\ud800 over http"}', "application/json"))
    try:
        proj = Project(tmp_path_factory.mktemp("unstorable") / "proj")
        proj.write("niceeval.toml", f'''
            [project]
            max_concurrency = 2

            [judge]
            model = "judge-m"
            base_url = "{judge.base_url}"
            api_key_env = "JK"

            [experiments.py]
            adapter = "python"
            evals = ["code/", "py/"]
            [experiments.py.options]
            callable = "bot:reply"

            [experiments.web]
            adapter = "http"
            evals = ["web/"]
            [experiments.web.options]
            url = "{service.url}/chat"
        ''')
        proj.write("bot.py", BOT)
        proj.write("evals/code/text.py", EVALS)
        proj.write("evals/py/sut.py", PY_EVALS)
        proj.write("evals/web/sut.py", WEB_EVALS)
        result = proj.run("--junit", "junit.xml", env={"JK": "sk-unstorable-test-key-0000", "NO_COLOR": "1"})
        yield Outcome(proj, result)
    finally:
        service.stop()
        judge.stop()



def test_unencodable_text_and_huge_integers_do_not_abort_the_run(outcome: Outcome) -> None:
    res = outcome.result
    assert res.returncode == 0, res.stdout + res.stderr
    assert "Task exception" not in res.stderr and "Traceback" not in res.stderr, res.stderr
    assert "OverflowError" not in res.stdout + res.stderr
    runs = outcome.proj.sql("SELECT status, exit_code FROM runs")
    assert runs == [{"status": "finished", "exit_code": 0}]


def test_every_planned_slot_is_sealed_despite_hostile_values(outcome: Outcome) -> None:
    attempts = outcome.attempts()
    assert set(attempts) == {
        "py:code/text/in_test_code", "py:code/text/plain", "py:py/sut/reply_surrogate",
        "py:py/sut/reply_huge_usage", "py:py/sut/judge_surrogate", "py:py/sut/judge_huge_usage",
        "web:web/sut",
    }
    assert {a["state"] for a in attempts.values()} == {"passed"}, attempts


def test_lone_surrogates_are_stored_as_replacement_characters_and_noted(outcome: Outcome) -> None:
    proj = outcome.proj
    rows = proj.sql("SELECT a.eval_id, a.notes, r.label, r.evidence, r.explanation FROM assertion_results r "
                    "JOIN attempts a ON a.id = r.attempt_id")
    by_eval = {r["eval_id"]: r for r in rows}
    assert "\ufffd" in by_eval["code/text/in_test_code"]["evidence"]
    assert by_eval["code/text/in_test_code"]["label"] == "code \ufffd label"
    assert "\ufffd" in by_eval["py/sut/reply_surrogate"]["evidence"]
    assert "\ufffd" in by_eval["web/sut"]["evidence"]
    assert "\ufffd" in by_eval["py/sut/judge_surrogate"]["explanation"]
    for eval_id in ("code/text/in_test_code", "py/sut/reply_surrogate", "web/sut"):
        notes = json.loads(by_eval[eval_id]["notes"] or "[]")
        assert any("U+FFFD" in n for n in notes), (eval_id, by_eval[eval_id])
    assert by_eval["code/text/plain"]["notes"] in (None, "[]")


def test_a_judge_reasoning_with_a_lone_surrogate_is_noted_on_the_attempt(outcome: Outcome) -> None:
    row = outcome.proj.sql("SELECT notes FROM attempts WHERE eval_id = 'py/sut/judge_surrogate'")[0]
    assert any("U+FFFD" in n for n in json.loads(row["notes"] or "[]")), row


def test_out_of_range_usage_is_stored_as_unreported_with_a_warning(outcome: Outcome) -> None:
    attempts = outcome.attempts()
    sut = attempts["py:py/sut/reply_huge_usage"]
    assert sut["input_tokens"] is None and sut["output_tokens"] == 7
    assert any("input_tokens" in n for n in json.loads(sut["notes"]))
    judged = attempts["py:py/sut/judge_huge_usage"]
    assert judged["judge_tokens"] == 0
    tokens = outcome.proj.sql("SELECT judge_tokens FROM assertion_results WHERE attempt_id = ?", [judged["id"]])
    assert tokens in ([{"judge_tokens": None}], [{"judge_tokens": 0}])  # docs/judge.md: counts 0 tokens
    summary = outcome.result.stdout.lower()
    assert "usage" in summary and ("out of range" in summary or "unreported" in summary), outcome.result.stdout


def test_the_junit_file_is_written_and_parses(outcome: Outcome) -> None:
    tree = ET.parse(Path(outcome.proj.root / "junit.xml"))
    cases = tree.getroot().findall(".//testcase")
    assert len(cases) == 7
    assert not tree.getroot().findall(".//failure") and not tree.getroot().findall(".//error")
