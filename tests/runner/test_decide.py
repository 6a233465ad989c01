"""`decide` (config.md, "Reuse"): the rule for each slot, on the store's latest attempt as read."""

from __future__ import annotations

import pytest

from niceeval_cli._states import PlanReason
from niceeval_cli.runner import RerunMode
from niceeval_cli.runner._plan import changed_parts_of, decide
from niceeval_cli.store import LatestAttempt


def latest(state: str = "passed", gate: str | None = None, fingerprint: str = "fp", duration_ms: float = 10.0):
    return LatestAttempt("evals/a", 0, "01J0", "01R0", state, gate, fingerprint, duration_ms)


@pytest.mark.parametrize(("previous", "mode", "timeout_ms", "reason"), [
    (None, RerunMode.DEFAULT, None, PlanReason.NEW),
    (None, RerunMode.ALL, None, PlanReason.NEW),
    (latest(), RerunMode.ALL, None, PlanReason.RERUN),
    (latest(fingerprint="other"), RerunMode.DEFAULT, None, PlanReason.FINGERPRINT_CHANGED),
    (latest(fingerprint="other", state="errored"), RerunMode.DEFAULT, None, PlanReason.FINGERPRINT_CHANGED),
    (latest("errored"), RerunMode.DEFAULT, None, PlanReason.PREVIOUS_ERRORED),
    (latest("unrankable"), RerunMode.DEFAULT, None, PlanReason.PREVIOUS_UNRANKABLE),
    (latest("scored", gate="unavailable"), RerunMode.DEFAULT, None, PlanReason.PREVIOUS_UNRANKABLE),
    (latest(duration_ms=500.0), RerunMode.DEFAULT, 100, PlanReason.TIMEOUT_CHANGED),
    (latest(duration_ms=100.0), RerunMode.DEFAULT, 100, PlanReason.REUSED),
    (latest("failed"), RerunMode.DEFAULT, None, PlanReason.REUSED),
    (latest("failed"), RerunMode.RERUN, None, PlanReason.RERUN),
    (latest("scored", gate="failed"), RerunMode.RERUN, None, PlanReason.RERUN),
    (latest("scored", gate="passed"), RerunMode.RERUN, None, PlanReason.REUSED),
    (latest("scored", gate="none"), RerunMode.RERUN, None, PlanReason.REUSED),
    (latest("passed"), RerunMode.RERUN, None, PlanReason.REUSED),
])
def test_each_rule_of_reuse(previous, mode, timeout_ms, reason):
    assert decide(previous, "fp", timeout_ms, mode) is reason


def test_the_changed_parts_are_named_from_the_stored_parts():
    assert changed_parts_of('{"model":"a","ordinal":0}', '{"model":"b","ordinal":0}') == ("model",)
    assert changed_parts_of(None, '{"model":"b"}') == ("model",)  # no stored parts: every part changed
