"""Judge settings that cannot even start a call: no model, no key (judge.md, first two rows of
the failure table). Neither sends anything to the endpoint."""

from __future__ import annotations

import pytest

from tests.support.judge_e2e import KEY_ENV

GATED = """
    @define_eval(judge=True)
    def gated(t):
        t.check(QA, closed_qa("Names the capital?").at_least(1)).gate().label("capital")
"""


def test_no_model_anywhere_is_unavailable_model_unresolved_without_a_request(judged):
    judged.setup(GATED, toml="[project]\n" + judged.judge_table(model=None))

    run = judged.run()

    assert run.exit_code == 5
    row = judged.result("capital")
    assert (row["state"], row["reason"], row["measurement"], row["judge_tokens"]) == (
        "unavailable", "judge-model-unresolved", None, 0)
    attempt = judged.one_attempt()
    assert (attempt["state"], attempt["reason"], attempt["judge_tokens"]) == ("errored", "evidence-unavailable", 0)
    assert judged.server.requests == []
    assert judged.sql("SELECT status, exit_code FROM runs") == [{"status": "finished", "exit_code": 5}]


@pytest.mark.parametrize("key", [None, ""], ids=["unset", "empty"])
def test_an_unset_or_empty_key_is_unavailable_key_unresolved_without_a_request(judged, key):
    judged.setup(GATED)

    run = judged.run(key=key)

    assert run.exit_code == 5
    row = judged.result("capital")
    assert (row["state"], row["reason"]) == ("unavailable", "judge-key-unresolved")
    assert KEY_ENV in row["explanation"]  # the variable's name is what the user must fix
    assert judged.one_attempt()["reason"] == "evidence-unavailable"
    assert judged.server.requests == []


def test_the_default_key_variable_is_openai_api_key(judged):
    judged.setup(GATED, toml="[project]\n" + judged.judge_table(api_key_env=None))

    judged.run(env={"OPENAI_API_KEY": None})

    row = judged.result("capital")
    assert (row["state"], row["reason"]) == ("unavailable", "judge-key-unresolved")
    assert "OPENAI_API_KEY" in row["explanation"]
    assert judged.server.requests == []


def test_the_default_key_variable_is_read_when_set(judged):
    judged.setup(GATED, toml="[project]\n" + judged.judge_table(api_key_env=None))

    assert judged.run(env={"OPENAI_API_KEY": "sk-test-defaultKeyVariable0123456"}).exit_code == 0
    assert {r.headers["authorization"] for r in judged.server.requests} == {
        "Bearer sk-test-defaultKeyVariable0123456"}


def test_the_key_can_come_from_a_dotenv_file_without_overriding_the_environment(judged):
    judged.setup(GATED, files={".env": f"{KEY_ENV}=sk-test-fromTheDotEnvFile000000000\n"})

    assert judged.run(key=None).exit_code == 0
    assert judged.run("--rerun-all", key="sk-test-fromTheEnvironment11111111").exit_code == 0

    keys = [r.headers["authorization"] for r in judged.server.requests]
    assert keys[0] == "Bearer sk-test-fromTheDotEnvFile000000000"
    assert keys[-1] == "Bearer sk-test-fromTheEnvironment11111111"
