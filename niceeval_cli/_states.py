"""The one home of every state, role and reason name NiceEval stores or prints."""

from __future__ import annotations

from enum import Enum


class _Name(str, Enum):
    """A string enum whose str()/format() is its stored value on every Python version."""

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)


class AssertionState(_Name):
    MATCHED = "matched"
    MISMATCHED = "mismatched"
    MEASURED = "measured"
    MET = "met"
    BELOW = "below"
    UNAVAILABLE = "unavailable"
    ERRORED = "errored"


class AttemptState(_Name):
    PASSED = "passed"
    FAILED = "failed"
    ERRORED = "errored"
    SCORED = "scored"
    UNRANKABLE = "unrankable"


class GateState(_Name):
    PASSED = "passed"
    FAILED = "failed"
    UNAVAILABLE = "unavailable"
    NONE = "none"


class Role(_Name):
    GATE = "gate"
    SCORE = "score"
    GATE_SCORE = "gate+score"
    RECORD = "record"


class EvalKind(_Name):
    PASS = "pass"
    SCORE = "score"


class RunStatus(_Name):
    RUNNING = "running"
    FINISHED = "finished"
    INTERRUPTED = "interrupted"
    SETUP_ERROR = "setup-error"
    BUDGET_EXHAUSTED = "budget-exhausted"
    ABANDONED = "abandoned"  # never stored: shown by readers for a `running` run whose owner is gone


class Relation(_Name):
    ORIGIN = "origin"
    REFERENCE = "reference"


class PlanReason(_Name):
    NEW = "new"
    FINGERPRINT_CHANGED = "fingerprint-changed"
    TIMEOUT_CHANGED = "timeout-changed"
    RERUN = "rerun"
    PREVIOUS_ERRORED = "previous-errored"
    PREVIOUS_UNRANKABLE = "previous-unrankable"
    KEEP_SANDBOX = "keep-sandbox"  # a reusable attempt `--keep-sandbox` would keep: run again so there is one
    REUSED = "reused"
    REGRADE = "regrade"  # a slot of a `regrade` run: its attempt re-judged from the original's


class RunKind(_Name):
    """`runs.kind` (schema 9): a run that executed attempts, or one that re-judged a run's."""

    RUN = "run"
    REGRADE = "regrade"  # `niceeval regrade` (judge-trust.md §2); `runs.regrade_of` names the original


class AttemptReason(_Name):
    """Why an Attempt is `errored` (or `unrankable`)."""

    ADAPTER_ERROR = "adapter-error"
    EXCEPTION = "exception"
    TIMEOUT = "timeout"
    AUTHORING_ERROR = "authoring-error"
    NO_ADAPTER = "no-adapter"
    INTERRUPTED = "interrupted"
    SANDBOX_PREPARE_FAILED = "sandbox-prepare-failed"  # a `prepare` command failed (docs/sandbox.md)
    EXECUTOR_LOST = "executor-lost"  # the worker or node running it died (scale.md, Ray)
    ASSERTION_ERRORED = "assertion-errored"
    EVIDENCE_UNAVAILABLE = "evidence-unavailable"
    # `regrade`: the original stopped at a judge's `.or_stop()` that the new judge would pass; the
    # code after it never ran, so its results cannot be invented (judge-trust.md §2).
    REGRADE_STOPPED_CONTINUATION = "regrade-stopped-continuation"


class UnavailableReason(_Name):
    """Reasons NiceEval itself gives for `unavailable` results (Facts bring their own)."""

    USAGE_UNREPORTED = "usage-unreported"
    CAPTURE_LIMIT_EXCEEDED = "capture-limit-exceeded"
    CANCELLED = "cancelled"
    COUNT_UNCERTAIN = "count-uncertain"
    JUDGE_MODEL_UNRESOLVED = "judge-model-unresolved"
    JUDGE_KEY_UNRESOLVED = "judge-key-unresolved"
    JUDGE_TIMEOUT = "judge-timeout"
    JUDGE_RATE_LIMITED = "judge-rate-limited"
    JUDGE_TRANSPORT_ERROR = "judge-transport-error"
    JUDGE_INCONSISTENT = "judge-inconsistent"  # the samples agree less than judge.min_agreement
    JUDGE_UNCALIBRATED = "judge-uncalibrated"  # the calibration gate: too few labels or too low a kappa
    MATERIAL_CAPACITY_EXCEEDED = "material-capacity-exceeded"
    DIFF_UNAVAILABLE = "diff-unavailable"  # a sandbox file whose content could not be read and diffed


class ErroredReason(_Name):
    """Reasons for an `errored` AssertionResult."""

    MATCH_ERROR = "match-error"
    JUDGE_INVALID_RESPONSE = "judge-invalid-response"
    JUDGE_EVALUATOR_ERROR = "judge-evaluator-error"


class Derived(_Name):
    """Words derived from stored states, never stored themselves: spelled here once.

    The hyphenated value is the filter / machine word (`view --state gate-failed`); `label` is the
    prose form the summary and `view` print.
    """

    GATE_FAILED = "gate-failed"  # a `scored` attempt whose gate failed (points kept)
    # A score attempt that is also unrankable / errored keeps its state word, and its failed gate
    # is said beside it: a definite failure (exit 1) is never hidden behind an undecided word.
    UNRANKABLE_GATE_FAILED = "unrankable-gate-failed"
    ERRORED_GATE_FAILED = "errored-gate-failed"
    GATE_UNAVAILABLE = "gate-unavailable"  # a score attempt whose gate could not decide
    NOT_RUN = "not-run"  # a planned slot that never started (interrupted, budget, missing shard)
    NOT_DISPATCHED = "not-dispatched"  # a slot held back by a failed preflight

    @property
    def label(self) -> str:
        """`gate failed`; a state with a failed gate reads `unrankable (gate failed)`."""
        return _PROSE.get(self.value) or self.value.replace("-", " ")


_PROSE = {
    Derived.UNRANKABLE_GATE_FAILED.value: "unrankable (gate failed)",
    Derived.ERRORED_GATE_FAILED.value: "errored (gate failed)",
}


# ── lists of these words, each made once ─────────────────────────────────────────────────

#: An attempt's outcomes worth a look, worst first (`outcomes.is_clean` is false for them): as the
#: store's attempt filters and `view --state` take them.
PROBLEM_STATES: tuple[str, ...] = tuple(word.value for word in (
    AttemptState.ERRORED, AttemptState.FAILED, AttemptState.UNRANKABLE, Derived.GATE_FAILED, Derived.GATE_UNAVAILABLE,
))
#: An attempt's outcomes with nothing to look at: passed, or scored with its gate passed or absent.
CLEAN_STATES: tuple[str, ...] = (AttemptState.PASSED.value, AttemptState.SCORED.value)
#: `view --state` values: attempt states, plus the two score-gate words.
STATE_FILTERS: tuple[str, ...] = (*PROBLEM_STATES, *CLEAN_STATES)
#: Every word a report says for an attempt's outcome (a failed score gate is said beside its
#: state), worst first: the order counts are listed in.
ATTEMPT_WORDS: tuple[str, ...] = (
    AttemptState.ERRORED.value, Derived.ERRORED_GATE_FAILED.label, AttemptState.FAILED.value,
    AttemptState.UNRANKABLE.value, Derived.UNRANKABLE_GATE_FAILED.label, Derived.GATE_FAILED.label,
    Derived.GATE_UNAVAILABLE.label, AttemptState.PASSED.value, AttemptState.SCORED.value,
)

# Members by their stored value (a member is its value too, so either looks one up): a dict lookup
# where readers of many rows would otherwise call the enum once per row.
ATTEMPT_STATE_OF: dict[str, AttemptState] = {s.value: s for s in AttemptState}
ASSERTION_STATE_OF: dict[str, AssertionState] = {s.value: s for s in AssertionState}
GATE_OF: dict[str, GateState] = {g.value: g for g in GateState}
KIND_OF: dict[str, EvalKind] = {k.value: k for k in EvalKind}
