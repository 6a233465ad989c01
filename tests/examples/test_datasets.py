"""examples/datasets: one eval over questions.jsonl, one over orders.csv; a case eval per row,
and editing one row re-runs that row only (docs/datasets.md)."""

from __future__ import annotations

import json
import sys
from typing import Any

POLICY = ("return-window", "refund-late", "shipping-time", "shipping-abroad", "warranty", "damaged", "gift-card",
          "unclear")


def _forget(examples: Any) -> None:
    """A new `niceeval` process imports the data afresh; the CLI runs in-process here."""
    root = str(examples.root.resolve())
    for name, module in list(sys.modules.items()):
        if (getattr(module, "__file__", None) or "").startswith(root):
            del sys.modules[name]


def test_every_row_is_a_passing_case_eval(examples: Any) -> None:
    run = examples.run("-e", "datasets")
    assert run.exit_code == 0, run.output
    attempts = examples.query("attempts", "--experiment", "datasets")
    assert {(a["eval_id"], a["case_id"], a["state"]) for a in attempts} == {
        *((f"datasets/policy[{case}]", case, "passed") for case in POLICY),
        *((f"datasets/totals[o-{n}]", f"o-{n}", "passed") for n in range(1, 6)),
    }
    assert "datasets/policy: 8 of 8 cases passed" in run.output
    assert "datasets/totals: 5 of 5 cases passed" in run.output


def test_editing_one_csv_row_reruns_that_case_only_and_fails_it(examples: Any) -> None:
    assert examples.run("-e", "datasets").exit_code == 0
    orders = examples.root / "examples" / "datasets" / "orders.csv"
    orders.write_text(orders.read_text(encoding="utf-8").replace("o-2,mug,4,,34.00", "o-2,mug,4,,35.00"),
                      encoding="utf-8")
    _forget(examples)
    run = examples.run("-e", "datasets", "--dry", "--json")
    [event] = [json.loads(line) for line in run.output.splitlines() if line.startswith("{")]
    executing = {s["eval_id"]: (s["plan_reason"], s["changed"]) for s in event["slots"] if s["decision"] == "execute"}
    assert executing == {"datasets/totals[o-2]": ("fingerprint-changed", ["case"])}
    _forget(examples)
    again = examples.run("-e", "datasets")
    assert again.exit_code == 1
    assert "datasets/totals: 4 of 5 cases passed · 1 failed" in again.output


def test_a_glob_selects_the_csv_rows(examples: Any) -> None:
    run = examples.run("-e", "datasets", "datasets/totals[o-*]")
    assert run.exit_code == 0, run.output
    assert {a["eval_id"] for a in examples.query("attempts")} == {f"datasets/totals[o-{n}]" for n in range(1, 6)}
