"""examples/agent_tools: a tool-using support agent, every scoped assertion, two sessions, a
broken variant that calls the wrong tool."""

from __future__ import annotations

from typing import Any


def _states(project: Any, experiment: str) -> dict[str, tuple[str, Any]]:
    return {a["eval_id"]: (a["state"], a["score"]) for a in project.query("attempts", "--experiment", experiment)}


def test_the_agent_passes_every_eval_and_loses_a_point_for_a_recovered_failure(examples: Any) -> None:
    run = examples.run("-e", "agent_tools", "--rerun-all")
    assert _states(examples, "agent_tools") == {
        "agent_tools/recovery": ("scored", 2.0),
        "agent_tools/refunds/refund_flow": ("passed", None),
        "agent_tools/refunds/shipping_question": ("passed", None),
        "agent_tools/sessions": ("passed", None),
    }, run.output
    failed = [r for r in examples.query("assertions", "--experiment", "agent_tools")
              if r["label"] == "No failed tool call" and r["eval_id"] == "agent_tools/recovery"]
    assert failed[0]["state"] == "mismatched"
    assert "#1 lookup_order failed" in failed[0]["explanation"]


def test_the_broken_variant_fails_the_refund_gates_naming_the_wrong_call(examples: Any) -> None:
    run = examples.run("-e", "agent_tools/broken")
    assert run.exit_code == 1, run.output
    states = _states(examples, "agent_tools/broken")
    assert states["agent_tools/refunds/refund_flow"] == ("failed", None)
    assert states["agent_tools/sessions"] == ("failed", None)
    assert states["agent_tools/refunds/shipping_question"] == ("passed", None)
    by_label = {r["label"]: r for r in examples.query("assertions", "--experiment", "agent_tools/broken",
                                                       "--eval", "agent_tools/refunds/refund_flow")}
    assert by_label["Did not cancel the order"]["explanation"] == (
        "expected no call of tool_match('cancel_order'), counted 1: #2"
    )
    assert by_label["Refunded the full amount once"]["state"] == "mismatched"
