"""examples/support: the seed's support review, scored 0-100 with delivery, usage and runtime gates."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.loopback import JudgeServer, Reply


@pytest.fixture
def judged(examples: Any, judge_server: JudgeServer) -> Any:
    judge_server.default = Reply.tool("Y", "natural and clear")
    examples.use_judge(judge_server)
    return examples


def _scores(project: Any, experiment: str) -> tuple[Any, ...]:
    a = project.attempt(experiment)
    return a["state"], a["gate"], a["score"], a["max_score"], a["unavailable_weight"]


def test_a_resolved_chat_scores_participation_expression_and_completion(
    judged: Any, judge_server: JudgeServer,
) -> None:
    run = judged.run("-e", "support", "-e", "support/")
    assert run.exit_code == 5, run.output  # support/unobserved-completion is unrankable
    # 5 (participation) + 45 (expression) + 50 × (1 - 45/180) = 87.5
    assert _scores(judged, "support") == ("scored", "passed", 87.5, 100, 0)
    rows = judged.assertions("support")
    assert {k: (r["role"], r["state"]) for k, r in rows.items()} == {
        "Participation": ("score", "matched"),
        "At least one delivery": ("gate", "matched"),
        "Expression quality": ("score", "measured"),
        "Completion duration": ("score", "measured"),
        "Usage limit": ("gate", "matched"),
        "Runtime limit": ("gate", "matched"),
    }
    assert rows["Completion duration"]["measurement"] == 0.75
    attempt = judged.attempt("support")
    assert (attempt["input_tokens"], attempt["output_tokens"]) == (1800, 120)


def test_the_expression_judge_reads_every_agent_speech_and_nothing_else(
    judged: Any, judge_server: JudgeServer,
) -> None:
    judged.run("-e", "support")
    [grading, *_] = judge_server.grading_requests
    user = next(m["content"] for m in grading.json["messages"] if m["role"] == "user")
    assert "Is every utterance natural, complete, and clear?" in user
    assert "Is there anything else I can help you with today?" in user  # undelivered, unverified: kept
    assert "I was charged twice" not in user  # the customer's speech is not selected
    config = judged.assertions("support")["Expression quality"]["match_config"]  # a JSON value
    assert (config["max_material_bytes"], config["max_audit_bytes"]) == (256 * 1024, 1024 * 1024)


def test_an_unobserved_completion_keeps_its_50_points_unavailable_never_0(judged: Any) -> None:
    judged.run("-e", "support/")
    assert _scores(judged, "support/unobserved-completion") == ("unrankable", "passed", 50, 100, 50)
    completion = judged.assertions("support/unobserved-completion")["Completion duration"]
    assert (completion["state"], completion["reason"], completion["contribution"], completion["weight"]) == (
        "unavailable", "completion-event-missing", None, 50)


@pytest.mark.parametrize("options", [{"resolution": "abandoned"}, {"business_seconds": 200}])
def test_not_completing_or_completing_too_slowly_is_a_real_0_for_completion(
    judged: Any, options: dict[str, Any],
) -> None:
    judged.add_experiment("support/variant", "support/", **options)
    judged.run("-e", "support/variant")
    assert _scores(judged, "support/variant") == ("scored", "passed", 50, 100, 0)
    completion = judged.assertions("support/variant")["Completion duration"]
    assert (completion["state"], completion["measurement"], completion["contribution"]) == ("measured", 0, 0)


def test_an_offline_chat_widget_fails_the_delivery_gate_and_keeps_the_earned_points(judged: Any) -> None:
    judged.add_experiment("support/offline", "support/", chat_widget="offline")
    run = judged.run("-e", "support/offline")
    assert run.exit_code == 1, run.output
    assert _scores(judged, "support/offline") == ("scored", "failed", 87.5, 100, 0)
    assert judged.assertions("support/offline")["At least one delivery"]["state"] == "mismatched"


def test_unreported_usage_leaves_the_usage_gate_unavailable(judged: Any) -> None:
    judged.add_experiment("support/no-usage", "support/", report_usage=False)
    run = judged.run("-e", "support/no-usage")
    assert run.exit_code == 5, run.output  # the gate could not be decided: not a failure
    assert _scores(judged, "support/no-usage") == ("scored", "unavailable", 87.5, 100, 0)
    usage = judged.assertions("support/no-usage")["Usage limit"]
    assert (usage["state"], usage["reason"]) == ("unavailable", "usage-unreported")
