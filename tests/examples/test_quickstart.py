"""examples/quickstart: a Python-callable agent, two pass-style evals, one judge item."""

from __future__ import annotations

from typing import Any

from tests.support.loopback import JudgeServer, Reply


def _states(project: Any, experiment: str) -> dict[str, tuple[str, Any]]:
    return {a["eval_id"]: (a["state"], a["reason"]) for a in project.query("attempts", "--experiment", experiment)}


def test_with_a_judge_answering_yes_both_evals_pass(examples: Any, judge_server: JudgeServer) -> None:
    judge_server.default = Reply.tool("Y", "states 30 days plainly")
    examples.use_judge(judge_server)
    run = examples.run("-e", "quickstart")
    assert run.exit_code == 0, run.output
    assert _states(examples, "quickstart") == {
        "quickstart/basics/greeting": ("passed", None),
        "quickstart/basics/refund_window": ("passed", None),
    }
    [grading] = judge_server.grading_requests
    assert grading.json["model"] == "gpt-4o-mini"
    assert grading.headers["authorization"] == "Bearer examples-test-key-5fQ2"
    greeting = examples.query("attempts", "--experiment", "quickstart", "--eval", "quickstart/basics/greeting")[0]
    assert (greeting["input_tokens"], greeting["output_tokens"]) == (6, 16)  # reported by the agent


def test_a_judge_answering_no_fails_the_gated_judge_item(examples: Any, judge_server: JudgeServer) -> None:
    judge_server.default = Reply.tool("N", "does not say when the window starts")
    examples.use_judge(judge_server)
    run = examples.run("-e", "quickstart")
    assert run.exit_code == 1, run.output
    assert _states(examples, "quickstart")["quickstart/basics/refund_window"] == ("failed", None)
    [clear] = [r for r in examples.query("assertions", "--experiment", "quickstart") if r["label"] == "Clear answer"]
    assert (clear["state"], clear["measurement"], clear["threshold"]) == ("below", 0.0, 0.8)


def test_the_judged_experiment_points_the_judge_at_its_own_endpoint(
    examples: Any, judge_server: JudgeServer, monkeypatch: Any,
) -> None:
    examples.replace('base_url = "http://localhost:11434/v1"', f'base_url = "{judge_server.base_url}"')
    monkeypatch.setenv("LOCAL_JUDGE_API_KEY", "ollama")
    run = examples.run("-e", "judged")
    assert run.exit_code == 0, run.output
    assert {r.json["model"] for r in judge_server.grading_requests} == {"llama3.1:8b"}
    assert _states(examples, "judged")["quickstart/basics/refund_window"] == ("passed", None)


def test_the_judged_experiment_with_its_key_set_but_no_server_is_a_setup_error(
    examples: Any, monkeypatch: Any,
) -> None:
    examples.replace('base_url = "http://localhost:11434/v1"', 'base_url = "http://127.0.0.1:9/v1"')
    monkeypatch.setenv("LOCAL_JUDGE_API_KEY", "ollama")
    run = examples.run("-e", "judged")
    assert run.exit_code == 3, run.output
    assert "judged" in run.output and "127.0.0.1:9" in run.output


def test_the_quickstart_folder_is_a_project_of_its_own(examples: Any) -> None:
    run = examples.run(cwd=examples.root / "examples" / "quickstart")
    assert run.exit_code == 5, run.output  # the judge item is unavailable: no key on this machine
    assert _states(examples, "local") == {
        "basics/greeting": ("passed", None),
        "basics/refund_window": ("errored", "evidence-unavailable"),
    }
