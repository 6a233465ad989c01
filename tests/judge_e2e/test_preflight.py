"""Preflight through `niceeval run` (judge.md, third row of the failure table): one minimal
request per distinct (model, base_url, api_key_env) before dispatch; an endpoint that refuses
the setting is a setup error for exactly the evals that use it."""

from __future__ import annotations

import pytest

from tests.support.judge_e2e import JUDGE_MODEL, KEY, closed_port
from tests.support.loopback import Reply

JUDGE_EVAL = """
    @define_eval(judge=True)
    def judged_eval(t):
        t.check(QA, closed_qa("Names the capital?").at_least(1)).gate().label("capital")
"""

PLAIN_EVAL = """
    from niceeval_cli.expect import equals

    @define_eval()
    def plain(t):
        t.check("Paris.", equals("Paris.")).label("same")
"""

OTHER_KEY = "sk-test-otherExperimentKey98765432"


def _two_experiments(judged, bad_judge: str) -> None:
    """Experiment `good` uses the working [judge]; experiment `bad` overrides it with `bad_judge`."""
    toml = ("[project]\n" + judged.judge_table() + "[experiments.good]\n"
            + "[experiments.bad]\n[experiments.bad.judge]\n" + bad_judge)
    judged.setup({"judged_eval": JUDGE_EVAL, "plain": PLAIN_EVAL}, toml=toml)


def _closed_url() -> str:
    return f"http://127.0.0.1:{closed_port()}/v1"


# (bad experiment's judge table, server scripting, text of the cause, endpoint shown)
CASES = {
    "connection-refused": (lambda s: f'base_url = "{s["closed"]}"\n', None, "connect", "closed"),
    "dns": (lambda s: 'base_url = "http://judge-e2e.invalid/v1"\n', None, "connect", "http://judge-e2e.invalid/v1"),
    "401": (lambda s: 'api_key_env = "JK_OTHER"\n', "key", "401 Unauthorized", "server"),
    "403": (lambda s: 'model = "judge-forbidden"\n', "forbid", "403 Forbidden", "server"),
    "unknown-model-404": (lambda s: 'model = "judge-typo"\n', "models", "404 Not Found", "server"),
    # never followed, and the grading calls were answered the same: a bare "301 Moved Permanently" each
    "redirect": (lambda s: 'model = "judge-moved"\n', "moved", "a redirect to https://judge.example/v1", "server"),
}


@pytest.mark.parametrize("case", CASES)
def test_a_refused_preflight_is_a_setup_error_for_the_affected_evals_only(judged, case):
    table, scripting, cause, shown = CASES[case]
    urls = {"closed": _closed_url(), "server": judged.server.base_url}
    _two_experiments(judged, table(urls))
    if scripting == "key":
        judged.server.api_key = KEY
    elif scripting == "forbid":
        judged.server.when("judge-forbidden", Reply.error(403, "project has no access to judge-forbidden"))
    elif scripting == "models":
        judged.server.models = {JUDGE_MODEL}
    elif scripting == "moved":
        judged.server.when("judge-moved", Reply(301, "", (("Location", "https://judge.example/v1/chat/completions"),)))

    run = judged.run(env={"JK_OTHER": OTHER_KEY})

    assert run.exit_code == 3, run.stdout + run.stderr
    assert judged.sql("SELECT status, exit_code FROM runs") == [{"status": "setup-error", "exit_code": 3}]
    stored = {(a["experiment_id"], a["eval_id"]): a["state"] for a in judged.attempts()}
    assert stored == {("good", "judged_eval"): "passed", ("good", "plain"): "passed", ("bad", "plain"): "passed"}
    assert judged.sql("SELECT count(*) AS n FROM attempts WHERE experiment_id = 'bad' AND eval_id = 'judged_eval'"
                      ) == [{"n": 0}]
    endpoint = urls.get(shown, shown) + "/chat/completions"
    named = ("bad", "judged_eval", endpoint, cause)
    lines = (run.stdout + run.stderr).splitlines()
    assert any(all(n in line for n in named) for line in lines), (named, lines)  # one line says it all
    assert all(r.json["model"] == JUDGE_MODEL and r.headers["authorization"] == f"Bearer {KEY}"
               for r in judged.grading), "nothing is graded with the refused setting"
    assert len(judged.grading) == 1


def test_a_setup_error_dominates_a_definite_failure(judged):
    _two_experiments(judged, 'api_key_env = "JK_OTHER"\n')
    judged.server.api_key = KEY
    judged.server.default = Reply.tool("N", "the good experiment fails its gate")

    run = judged.run(env={"JK_OTHER": OTHER_KEY})

    assert run.exit_code == 3
    assert judged.sql("SELECT state FROM attempts WHERE experiment_id = 'good' AND eval_id = 'judged_eval'"
                      ) == [{"state": "failed"}]


@pytest.mark.parametrize("answer", [Reply.error(429, "slow down"), Reply.error(500, "oops")], ids=["429", "500"])
def test_a_busy_or_failing_endpoint_at_preflight_is_not_a_setup_error(judged, answer):
    judged.setup(JUDGE_EVAL)
    judged.server.enqueue(answer)  # only the preflight sees it

    run = judged.run()

    assert run.exit_code == 0
    assert judged.result("capital")["state"] == "met"


def test_one_preflight_per_distinct_model_base_url_and_key_variable(judged):
    toml = ("[project]\nmax_concurrency = 8\n" + judged.judge_table()
            + "[experiments.one]\n[experiments.two]\n"
            + '[experiments.other_key]\n[experiments.other_key.judge]\napi_key_env = "JK_OTHER"\n')
    judged.setup({
        "a": JUDGE_EVAL,
        "b": JUDGE_EVAL,
        # timeout and retries differ, the (model, base_url, api_key_env) does not: no new probe
        "c": JUDGE_EVAL.replace("judge=True", 'judge={"timeout_ms": 9000, "max_retries": 1}'),
        "d": JUDGE_EVAL.replace("judge=True", 'judge={"model": "judge-two"}'),
    }, toml=toml)

    run = judged.run("--attempts", "2", env={"JK_OTHER": OTHER_KEY})

    assert run.exit_code == 0
    probes = sorted((r.json["model"], r.headers["authorization"]) for r in judged.probes)
    assert probes == sorted([
        (JUDGE_MODEL, f"Bearer {KEY}"), ("judge-two", f"Bearer {KEY}"),
        (JUDGE_MODEL, f"Bearer {OTHER_KEY}"), ("judge-two", f"Bearer {OTHER_KEY}"),
    ])
    assert len(judged.grading) == 3 * 4 * 2
    last_probe = max(r.ended for r in judged.probes)
    assert all(r.started >= last_probe for r in judged.grading), "preflight completes before dispatch"
