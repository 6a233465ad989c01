"""examples/directions: each switch of the grid world produces the outcome the seed describes."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.support.loopback import JudgeServer, Reply

EXPRESSION = "Is all of A's formal speech natural, complete, and understandable in context?"
INFORMATION = "Does the delivered conversation provide enough information to find the destination?"

PREREQUISITE = "Prerequisite: records complete and correlated"
CP1 = "Checkpoint 1/A delivered a request for directions to B"
CP2_EXPRESSION = "Checkpoint 2/Expression"
CP2_INFORMATION = "Checkpoint 2/Information"
CP2_ORIGIN = "Checkpoint 2/Model origin of A's speech"
CP3_CHOSE = "Checkpoint 3/A's model chose movement"
CP3_EXECUTED = "Checkpoint 3/The application executed it"
CP3_MET = "Checkpoint 3/A arrived and met B"
CP3_INDEPENDENT = "Checkpoint 3/Independent completion"


@pytest.fixture
def judged(examples: Any, judge_server: JudgeServer) -> Any:
    judge_server.default = Reply.tool("Y", "clear and sufficient")
    examples.use_judge(judge_server)
    return examples


def _grading(server: JudgeServer, question: str) -> str:
    """The user message of the one grading request that asked `question`."""
    [request] = [r for r in server.grading_requests if question in json.dumps(r.json, ensure_ascii=False)]
    return "\n".join(m["content"] for m in request.json["messages"] if m["role"] == "user")


def _states(rows: dict[str, dict[str, Any]]) -> dict[str, str]:
    return {key: row["state"] for key, row in rows.items()}


def test_success_scores_10_of_10_with_every_gate_passed(judged: Any, judge_server: JudgeServer) -> None:
    run = judged.run("-e", "directions/success")
    assert run.exit_code == 0, run.output
    attempt = judged.attempt("directions/success")
    assert (attempt["state"], attempt["gate"], attempt["score"], attempt["max_score"]) == ("scored", "passed", 10, 10)
    rows = judged.assertions("directions/success")
    assert _states(rows) == {
        PREREQUISITE: "matched", CP1: "matched",
        CP2_EXPRESSION: "measured", CP2_INFORMATION: "measured",
        CP2_ORIGIN: "unavailable",  # one line came from a dialogue fallback: origin unknown, recorded only
        CP3_CHOSE: "matched", CP3_EXECUTED: "matched", CP3_MET: "matched", CP3_INDEPENDENT: "matched",
    }
    assert rows[CP2_ORIGIN]["role"] == "record" and rows[CP2_ORIGIN]["reason"] == "model-origin-unverified"
    assert [(rows[k]["role"], rows[k]["weight"]) for k in (CP2_EXPRESSION, CP2_INFORMATION, CP3_INDEPENDENT)] == [
        ("score", 2), ("score", 3), ("gate+score", 5)]
    assert "clear and sufficient" in rows[CP2_EXPRESSION]["explanation"]  # each judgment shows its reason


def test_the_two_judges_read_separately_selected_material(judged: Any, judge_server: JudgeServer) -> None:
    judged.run("-e", "directions/success")
    expression = _grading(judge_server, EXPRESSION)
    # All of A's formal speech: the unverified greeting and the line B never heard are kept ...
    assert "Hello there." in expression and "B, wait for me at the well!" in expression
    # ... but not B's speech.
    assert "Walk east along the lane" not in expression
    information = _grading(judge_server, INFORMATION)
    # What was delivered, plus the official map and the destination; never the unheard line.
    assert "Walk east along the lane" in information
    assert "<official_map>" in information and '"old well": {' in information
    assert "<destination>\nold well\n</destination>" in information
    assert "B, wait for me at the well!" not in information


def test_b_never_hearing_the_question_fails_checkpoint_1_and_keeps_the_earned_points(
    judged: Any, judge_server: JudgeServer,
) -> None:
    judge_server.when(INFORMATION, Reply.tool("N", "nothing useful was heard"))
    run = judged.run("-e", "directions/unheard")
    assert run.exit_code == 1, run.output  # a failed gate is a definite failure
    attempt = judged.attempt("directions/unheard")
    assert (attempt["state"], attempt["gate"], attempt["score"], attempt["max_score"]) == ("scored", "failed", 2, 10)
    rows = judged.assertions("directions/unheard")
    assert rows[CP1]["state"] == "mismatched"
    assert (rows[CP2_EXPRESSION]["contribution"], rows[CP2_INFORMATION]["contribution"]) == (2, 0)
    assert (rows[CP3_MET]["state"], rows[CP3_INDEPENDENT]["state"]) == ("mismatched", "mismatched")
    expression = _grading(judge_server, EXPRESSION)
    assert "Could you tell me how to get there?" in expression  # unheard, still judged
    assert "looks around" not in expression  # an emote is not formal speech


def test_the_player_moving_a_never_counts_as_independent_completion(judged: Any) -> None:
    run = judged.run("-e", "directions/player-moves")
    assert run.exit_code == 1, run.output
    attempt = judged.attempt("directions/player-moves")
    assert (attempt["state"], attempt["gate"], attempt["score"], attempt["max_score"]) == ("scored", "failed", 5, 10)
    rows = judged.assertions("directions/player-moves")
    # The three records are separate: the model chose, but its moves were not executed; A did meet B.
    assert (rows[CP3_CHOSE]["state"], rows[CP3_EXECUTED]["state"], rows[CP3_MET]["state"]) == (
        "matched", "mismatched", "matched")
    assert (rows[CP3_INDEPENDENT]["state"], rows[CP3_INDEPENDENT]["contribution"]) == ("mismatched", 0)


def test_uncorrelated_records_stop_every_dependent_check_and_fabricate_no_zero(
    judged: Any, judge_server: JudgeServer,
) -> None:
    run = judged.run("-e", "directions/uncorrelated")
    assert run.exit_code == 5, run.output  # not a definite failure: we could not tell
    attempt = judged.attempt("directions/uncorrelated")
    assert (attempt["state"], attempt["gate"]) == ("unrankable", "unavailable")
    assert attempt["reason"] == "records-uncorrelated"
    assert "Prerequisite" in attempt["stop_cause"]
    rows = judged.assertions("directions/uncorrelated")
    assert list(rows) == [PREREQUISITE]
    assert (rows[PREREQUISITE]["state"], rows[PREREQUISITE]["reason"], rows[PREREQUISITE]["or_stop"]) == (
        "unavailable", "records-uncorrelated", 1)
    assert judge_server.grading_requests == []  # the judges never ran
