"""examples/from_promptfoo: promptfoo's own test file, run unchanged (integrations.md, section 5)."""

from __future__ import annotations

from typing import Any


def test_each_promptfoo_assertion_is_a_check_and_javascript_is_never_a_silent_pass(examples: Any) -> None:
    run = examples.run("-e", "from_promptfoo")
    assert run.exit_code == 5, run.output
    rows = [r for r in examples.query("assertions") if r["experiment_id"] == "from_promptfoo"]
    by_label = {(r["eval_id"], r["label"]): (r["state"], r["reason"]) for r in rows}
    assert by_label[("from_promptfoo/suite[capital of France]", "1. icontains paris")] == ("matched", None)
    assert by_label[("from_promptfoo/suite[capital of France]", "2. not-contains London")] == ("matched", None)
    assert by_label[("from_promptfoo/suite[arithmetic]", "1. equals 4")] == ("matched", None)
    assert by_label[("from_promptfoo/suite[arithmetic]", "2. javascript output.length < 10")] == (
        "unavailable", "unsupported-assertion:javascript")
    assert by_label[("from_promptfoo/suite[structured answer]", "1. is-json")] == ("matched", None)
    assert by_label[("from_promptfoo/suite[structured answer]", "3. llm-rubric States that the order has shipped")
                    ] == ("unavailable", "judge-key-unresolved")
