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
    # Per-measurement extras (JSON object text) that are not judge-specific: e.g. the tool calls
    # an agent assertion pointed at ({"calls": [[turn_ordinal, seq], ...]}), sandbox diff stats.
    extras: str | None = None
    # Judge-trust (schema 6): with judge.samples > 1, the share of the measured samples at the
    # median, and how many samples were measured; None for one sample and non-judge assertions.
    agreement: float | None = None
    judge_samples: int | None = None
    # Regrade (schema 9): the sha256 of the judge's full input, and (not a column: the row of table
    # `judge_inputs` sealed with this result, like an attempt's turns) that input's canonical JSON.
    judge_input: str | None = None
    judge_input_content: str | None = None


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
    # What an attempt produces besides assertion results (schema 3). All optional, so a record
    # built by older code still seals.
    case_id: str | None = None  # datasets.md: NULL for evals without cases
    case_value: str | None = None  # canonical JSON of the case value, trimmed at the text bound
    case_metadata: str | None = None  # JSON of the case's metadata: stored and shown, never compared
    cost_usd: float | None = None  # reported by the provider (agents.md); never mixed with estimates
    estimated_cost_usd: float | None = None  # from [prices."MODEL"]
    sandbox: str | None = None  # JSON: kind, image, kept location (sandbox.md)
    traceback: str | None = None  # trimmed traceback of an exception in eval code (project frames kept)
    notes: str | None = None  # JSON list of what sealing changed: replaced code points, unreported usage
    # The eval's identity (authoring.md; schema 5): its module id and definition name, which stay
    # when the displayed `eval_id` changes (a module's only eval gaining a sibling).
    eval_module: str | None = None
    eval_name: str | None = None
    # The judge's cost, apart from the system under test's (judge-trust.md; schema 7): what the
    # judge endpoint reported for this attempt's grading calls, and its tokens priced by [prices].
    judge_cost_usd: float | None = None
    judge_estimated_cost_usd: float | None = None
    # Schema 9: the attempt a `niceeval regrade` re-judged into this one (judge-trust.md §2).
    regraded_from: str | None = None
    turns: tuple[TurnRecord, ...] = ()  # sealed with the attempt, in one transaction (not a column)


@dataclass(frozen=True)
class TurnRecord:
    """One turn of an attempt's transcript (agents.md, table `turns`)."""

    attempt_id: str
    session: str  # the session's id
    ordinal: int  # 0-based across sessions, in sending order
    input: str | None
    message: str | None
    status: str  # completed | failed | waiting
    observed: str  # JSON list drawn from ["messages", "tool_calls"]
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None
    elapsed_ms: float | None = None
    data: str | None = None  # JSON
    events: tuple[EventRecord, ...] = ()  # not a column: rows of table `events`


@dataclass(frozen=True)
class EventRecord:
    """One event of a turn (agents.md, table `events`)."""

    attempt_id: str
    turn_ordinal: int
    seq: int  # 0-based within the turn
    kind: str  # message | tool_call | error | a custom kind
    name: str | None = None
    role: str | None = None
    input: str | None = None  # JSON text
    output: str | None = None  # JSON text
    status: str | None = None
    text: str | None = None
