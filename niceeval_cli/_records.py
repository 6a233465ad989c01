"""Sealed records: what the runner writes and every reading surface reads.

Field names are the store's contract column names (cli.md, "Store").
"""

from __future__ import annotations

from dataclasses import dataclass

from ._states import AssertionState, AttemptState, EvalKind, GateState, Role


@dataclass(frozen=True)
class AssertionResult:
    id: str
    attempt_id: str
    ordinal: int  # registration order, 0-based
    key: str
    label: str | None
    group_name: str | None
    role: Role
    weight: float | None  # scoring entries only
    contribution: float | None  # settled scoring entries only; None (not 0) when unavailable
    state: AssertionState
    measurement: float | None
    threshold: float | None
    reason: str | None
    explanation: str | None
    match_name: str
    match_config: str  # canonical JSON
    evidence: str | None  # JSON text, trimmed and redacted
    source_file: str | None
    source_line: int | None
    or_stop: bool
    match_kind: str  # "boolean" or "score": pass-style verdicts count every Boolean assertion
    judge_audit: str | None = None  # JSON text, trimmed and redacted
    judge_tokens: int | None = None


@dataclass(frozen=True)
class AttemptRecord:
    id: str
    run_id: str
    experiment_id: str
    eval_id: str
    ordinal: int  # 0-based
    kind: EvalKind
    state: AttemptState
    reason: str | None
    score: float | None
    max_score: float | None
    unavailable_weight: float | None
    partial_score: float | None
    gate: GateState | None  # None for pass-style
    stop_cause: str | None
    error: str | None
    fingerprint: str
    fingerprint_parts: str  # canonical JSON of what the fingerprint hashed (for `run --dry` diffs)
    started_at: str  # ISO-8601 UTC
    ended_at: str
    duration_ms: float
    input_tokens: int | None
    output_tokens: int | None
    judge_tokens: int
