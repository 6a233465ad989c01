"""Judge settings resolve field by field, eval > experiment > project [judge] > defaults, into
one frozen object per (experiment, eval) that the fingerprint, the preflight and the grading
calls all see (judge.md: Capability and configuration; config.md: Fingerprint, Reuse)."""

from __future__ import annotations

import json

from tests.support.judge_e2e import KEY, KEY_ENV
from tests.support.loopback import JudgeServer, RecordedRequest, Reply

KEY2 = "sk-test-secondJudgeKeyValue555555"

EVALS = {
    "inherits": "judge=True",
    "own_model": 'judge={"model": "m-eval"}',
    "own_url": 'judge={"base_url": "URL_C"}',
}


def _module(name: str, declaration: str) -> str:
    return f"""
        @define_eval({declaration})
        def {name}(t):
            t.check(QA, closed_qa("Names the capital? marker-{name}").at_least(1)).gate().label("capital")
    """


def _seen(server_name: str, requests: list[RecordedRequest]) -> set[tuple[str, str, str, str]]:
    seen = set()
    for r in requests:
        text = json.dumps(r.json)
        name = next(n for n in EVALS if f"marker-{n}" in text)
        seen.add((name, server_name, r.json["model"], r.headers["authorization"]))
    return seen


def test_each_judge_field_resolves_eval_over_experiment_over_project(judged):
    with JudgeServer() as server_b, JudgeServer() as server_c:
        toml = (
            "[project]\n"
            + judged.judge_table(model="m-project", max_retries=2)
            + '[experiments.x.judge]\nmodel = "m-exp"\n'
            + f'[experiments.y.judge]\nbase_url = "{server_b.base_url}"\napi_key_env = "JK2"\n'
        )
        judged.setup({name: _module(name, decl.replace("URL_C", server_c.base_url))
                      for name, decl in EVALS.items()}, toml=toml)

        run = judged.run(env={"JK2": KEY2})

        assert run.exit_code == 0, run.stdout + run.stderr
        seen = (_seen("A", judged.grading) | _seen("B", server_b.grading_requests)
                | _seen("C", server_c.grading_requests))
    bearer, bearer2 = f"Bearer {KEY}", f"Bearer {KEY2}"
    assert seen == {
        ("inherits", "A", "m-exp", bearer), ("own_model", "A", "m-eval", bearer), ("own_url", "C", "m-exp", bearer),
        ("inherits", "B", "m-project", bearer2), ("own_model", "B", "m-eval", bearer2),
        ("own_url", "C", "m-project", bearer2),
    }
    # The same frozen settings are what the fingerprint holds (defaults filled in, no key value).
    parts = {(a["experiment_id"], a["eval_id"]): a["fingerprint_parts"]["judge"]
             for a in judged.attempts()}
    assert parts[("y", "own_model")] == {
        "model": "m-eval", "base_url": server_b.base_url, "api_key_env": "JK2", "timeout_ms": 180000,
        "max_retries": 2,
    }
    assert parts[("x", "inherits")]["api_key_env"] == KEY_ENV


def test_max_retries_resolves_eval_over_experiment_over_project(judged):
    toml = ("[project]\n" + judged.judge_table(max_retries=2)
            + "[experiments.x.judge]\nmax_retries = 1\n[experiments.y]\n")
    judged.setup({
        "by_eval": _module("inherits", 'judge={"max_retries": 0}'),
        "by_experiment": _module("own_model", "judge=True"),
    }, toml=toml)
    judged.server.enqueue(Reply.tool("Y"))  # the one preflight
    judged.server.default = Reply.error(500, "down")

    judged.run()

    sent = [json.dumps(r.json) for r in judged.grading]
    by_eval = sum("marker-inherits" in body for body in sent)
    by_experiment = sum("marker-own_model" in body for body in sent)
    assert by_eval == 1 + 1  # judge={"max_retries": 0} wins in both experiments: one request each
    assert by_experiment == 2 + 3  # x: its own max_retries = 1; y: the project's max_retries = 2
    assert {a["reason"] for a in judged.assertions()} == {"judge-transport-error"}


def _slots(judged) -> list[tuple[str, str]]:
    rows = judged.sql("SELECT run_id, plan_reason, relation FROM run_slots ORDER BY run_id")
    return [(r["plan_reason"], r["relation"]) for r in rows]


def test_the_fingerprint_changes_with_the_judge_model_and_nothing_is_reused(judged):
    judged.setup(_module("inherits", "judge=True"))
    table = "[project]\n" + judged.judge_table(model="judge-one")

    assert judged.run().exit_code == 0
    assert judged.run().exit_code == 0  # unchanged: reused, no judge call at all
    assert len(judged.server.requests) == 2  # one preflight, one grade
    assert _slots(judged) == [("new", "origin"), ("reused", "reference")]

    judged.project.write("niceeval.toml", table.replace("judge-one", "judge-two"))
    assert judged.run().exit_code == 0

    assert _slots(judged)[-1] == ("fingerprint-changed", "origin")
    assert judged.grading[-1].json["model"] == "judge-two"
    prints = judged.sql("SELECT fingerprint FROM attempts ORDER BY id")
    assert len({p["fingerprint"] for p in prints}) == 2


def test_the_key_value_and_judge_concurrency_do_not_change_the_fingerprint(judged):
    judged.setup(_module("inherits", "judge=True"))
    assert judged.run().exit_code == 0

    judged.project.write("niceeval.toml", "[project]\n" + judged.judge_table(max_concurrency=3))
    assert judged.run(key="sk-test-aRotatedKeyValue0000000000").exit_code == 0

    assert _slots(judged) == [("new", "origin"), ("reused", "reference")]
    assert len(judged.grading) == 1


def test_defaults_are_three_retries_and_the_default_key_variable(judged):
    judged.setup(_module("inherits", "judge=True"),
                 toml="[project]\n" + judged.judge_table(api_key_env=None))
    judged.server.default = Reply.error(429, "busy", retry_after=0)

    judged.run(env={"OPENAI_API_KEY": KEY2})

    assert len(judged.grading) == 4  # the first request and 3 retries
    assert judged.result("capital")["reason"] == "judge-rate-limited"
    assert {r.headers["authorization"] for r in judged.server.requests} == {f"Bearer {KEY2}"}
